#pragma once
// Job isolation with Linux control groups, behind one interface (CgroupManager) with a v1, a v2
// and (in tests) a fake implementation.
//
// Mode: decided at run time from /proc/mounts and the configured root (`CgroupMountpoint=`,
// default /sys/fs/cgroup): a cgroup2 mount AT the root -> v2 (unified); else the v1 controllers
// mounted under the root (cpuset, memory, devices, pids, freezer; each may be missing) -> v1;
// else none (jobs run without isolation, noded logs it).
//
// A job's cgroup is named relative to the root, "tessera/<node>-<hash of the spool dir>/job_<id>"
// (node and spool keep several simulated nodes and clusters on one host apart). v1 creates that path in every controller it uses;
// v2 creates it once and enables the controllers on the way down.
//
// Contracts (every implementation):
//  - Create: makes the cgroup and applies every limit of the spec; on error nothing is left. A
//    stale cgroup of the same name (a dead job's) is killed and removed first.
//  - ProcsFiles: the cgroup.procs files (one per v1 hierarchy, one for v2) through which a
//    process joins the cgroup by writing "0" to each: stepd's vfork'ed child does, before exec
//    (with system calls only), so everything the job forks, including setsid() escapees, stays
//    tracked.
//  - KillAll: SIGKILL to every process in the cgroup until it is empty (v1 freezes first when
//    the freezer is mounted; v2 writes cgroup.kill when the kernel has it), bounded by ~5 s.
//    Emptiness is read from a counter first (session 8: v1 pids.current, v2 cgroup.events
//    `populated`); the process list (a v1 cgroup.procs read builds a kernel pid list) only
//    while that says the cgroup is not empty.
//  - OomKilled: whether the kernel OOM-killed a process of the cgroup (v1 memory.oom_control
//    oom_kill, else under_oom/failcnt; v2 memory.events oom_kill).
//  - Remove: removes the (empty) cgroup; missing is fine.
//  - Release (issue 20 §2): ends a job's cgroup after KillAll. Default: Remove. v1 instead keeps
//    the emptied cgroup in a pool for a later Create (see "Pool" below).
//
// Pool (v1 only; cgroup v2 cannot rename a cgroup): per parent directory at most kCgroupPoolSlots
// released job cgroups, renamed "<parent>/pool_<k>" in every hierarchy (cpuacct too). The batch
// script's accounting child (kPooledAcctChild, task_usage.h) stays inside it (session 8: no
// memcg is made or destroyed per job); every other child (trun steps' tasks) is removed first.
// TaskUsageCgroups::CreateOrReset takes baselines of the kept child's counters, so usage is
// still per job. Create takes one back by rename(2) (the first hierarchy decides who gets slot k)
// and writes EVERY limit again, resetting the ones the spec leaves unset, so a reused cgroup is
// limited exactly as a new one. What a reused cgroup keeps: page-cache charges of earlier jobs in
// its memory cgroup (reclaimable; the kernel reclaims them first when the job nears its limit;
// CreateOrReset empties the kept child's when they exceed 1 MiB) and the kernel's cumulative
// memory oom_kill counters (the cgroup's and its kept child's), which Create reads as a baseline
// for OomKilled. Release falls back to Remove when the cgroup still has processes, when the kernel
// has no oom_kill counter (before 4.13), or when every slot is taken. A hierarchy whose slot
// entry is missing or taken (a crash between renames) gets a new directory: a slot is never
// shared by two jobs. noded removes its pool at start and exit (RemoveCgroupPool).
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::noded {

enum class CgroupMode { kNone, kV1, kV2 };
const char* CgroupModeName(CgroupMode m);

struct CgroupMounts {
  CgroupMode mode = CgroupMode::kNone;
  std::string root;                             // the configured root
  std::string unified;                          // v2: the cgroup2 mount (== root)
  std::map<std::string, std::string> v1;        // v1: controller -> mount point
  // The kernel's cgroup_threadgroup_rwsem favours writers (a `favordynmods` mount option on any
  // cgroup mount: the mode is global). Without it each write to a cgroup.procs file (every job
  // start, v1 and v2) waits for an RCU grace period, several ms; with it the write takes ~0.1 ms
  // and fork/exit pay a little more. Set at boot (`cgroup_favordynmods=true`, kernel >= 6.0) or
  // by remounting cgroup2 with it (docs/admin-guide.md, "cgroups"); noded only reports it.
  bool favordynmods = false;
};

// Pure: decides the mode from the text of /proc/mounts.
CgroupMounts DetectCgroups(const std::string& proc_mounts, const std::string& root);
// Reads /proc/mounts.
CgroupMounts DetectCgroupsOnHost(const std::string& root);

// A device rule as in v1 devices.allow: type 'c'/'b'/'a', major/minor (-1 = '*'), access "rwm".
struct DeviceRule {
  char type = 'c';
  int64_t major = -1;
  int64_t minor = -1;
  std::string access = "rwm";
  bool operator==(const DeviceRule& o) const {
    return type == o.type && major == o.major && minor == o.minor && access == o.access;
  }
};
std::string DeviceRuleText(const DeviceRule& r);     // "c 195:0 rwm", "c *:* m"
Result<DeviceRule> ParseDeviceRule(const std::string& text);

struct CgroupSpec {
  std::string name;              // relative to the root: "tessera/<node>/job_<id>"
  std::string cpus;              // cpuset list "0-1,4"; "" = not restricted
  uint64_t memory_bytes = 0;     // 0 = no limit
  uint64_t pids_max = 0;         // 0 = no limit
  bool restrict_devices = false; // when true only `devices` are allowed
  std::vector<DeviceRule> devices;
};

// The standard allow list every job gets (as runc/Slurm): mknod of anything, /dev/null, zero,
// full, random, urandom, tty, console, pts/ptmx and the pts devices.
std::vector<DeviceRule> StandardDeviceRules();

class CgroupManager {
 public:
  virtual ~CgroupManager() = default;
  virtual CgroupMode mode() const = 0;
  virtual Status Create(const CgroupSpec& spec) = 0;
  virtual std::vector<std::string> ProcsFiles(const std::string& name) const = 0;
  // Moves process `pid` into the cgroup (step tasks: noded adds each forked task before it
  // execs). Default: kUnimplemented.
  virtual Status AddPid(const std::string& name, pid_t pid) {
    (void)name;
    (void)pid;
    return Status(Code::kUnimplemented, "this cgroup manager cannot move other processes");
  }
  virtual Result<std::vector<pid_t>> Procs(const std::string& name) = 0;
  virtual Status KillAll(const std::string& name) = 0;
  virtual Result<bool> OomKilled(const std::string& name) = 0;
  virtual Status Remove(const std::string& name) = 0;
  virtual Status Release(const std::string& name) { return Remove(name); }
  // Freezes (frozen) or thaws the cgroup's processes: v1 freezer.state FROZEN/THAWED, v2
  // cgroup.freeze 1/0 (issue 16 §4: preemption by SUSPEND). Waits up to 1 s for a v1 freeze to
  // settle. kUnimplemented when the hierarchy has no freezer (the caller falls back to
  // SIGSTOP/SIGCONT).
  virtual Status Freeze(const std::string& name, bool frozen) {
    (void)name;
    (void)frozen;
    return Status(Code::kUnimplemented, "no cgroup freezer");
  }
  // Problems Create tolerated (e.g. the kernel refused the v2 device program); cleared.
  virtual std::vector<std::string> TakeWarnings() { return {}; }
};

// nullptr when mounts.mode is kNone.
std::unique_ptr<CgroupManager> MakeCgroupManager(const CgroupMounts& mounts);

// Helpers shared by the implementations (OS-facing, small).
Status WriteCgroupFile(const std::string& path, const std::string& value);
// One write() per value on one open file: files such as v1 devices.allow take one rule per
// write.
Status WriteCgroupValues(const std::string& path, const std::vector<std::string>& values);
std::vector<pid_t> ParsePidList(const std::string& text);
// "key value" lines (memory.events, memory.oom_control) -> value of key, or -1.
int64_t KeyedValue(const std::string& text, const std::string& key);
// rmdir (child cgroups first), retrying while the kernel still reports the cgroup busy (~2 s);
// missing is fine.
Status RemoveCgroupDir(const std::string& dir);
// RemoveCgroupDir of every child cgroup of `dir` but one named `keep` (if given); false when
// one is left.
bool RemoveCgroupChildren(const std::string& dir, const std::string& keep = "");

// The pool (see above): slots per parent, the slot's name, and its removal (every slot of
// `parent`, "tessera/<node>-<hash>", in every hierarchy; missing is fine).
constexpr int kCgroupPoolSlots = 16;
// The child a pooled cgroup keeps: the batch script's accounting cgroup ("<job>/batch").
constexpr char kPooledAcctChild[] = "batch";
std::string CgroupPoolSlot(const std::string& job_name, int k);
void RemoveCgroupPool(const CgroupMounts& mounts, const std::string& parent);

}  // namespace tessera::noded
