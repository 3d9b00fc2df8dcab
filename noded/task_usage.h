#pragma once
// Issue 19 (h19): resource usage per task, gathered from cgroups as Slurm's
// jobacct_gather/cgroup does (sacct MaxRSS, AveRSS, MaxVMSize, AveCPU, TotalCPU; sstat live).
//
// Every task (a step's rank on this node, or the batch script) gets an accounting cgroup
// `<job cgroup>/step_<id>/task_<rank>` (the batch script: `<job cgroup>/batch`), a child of the
// job's cgroup, so the job's limits still apply:
//  - v1: in the memory hierarchy (memory.max_usage_in_bytes = peak, memory.usage_in_bytes = now,
//    memory.stat total_pgmajfault) and the cpuacct hierarchy (cpuacct.stat user/system, in
//    USER_HZ ticks); the job joins neither child in its other hierarchies (cpuset, devices,
//    pids, freezer stay the job's).
//  - v2: in the unified hierarchy, without controllers of its own (the job cgroup holds
//    processes, so it cannot enable any for children): cpu.stat user_usec/system_usec (always
//    present); memory.peak / memory.current only where the kernel offers them there, else the
//    memory figures come from the samples below.
// Disk (h19 s6: MaxDiskRead/Write, AveDisk*): as Slurm's jobacct_gather (common_jag.c), the
// rchar/wchar of /proc/<pid>/io: bytes passed to read/write calls (files, page cache, pipes and
// terminals alike), not block-device traffic. Sampled with the memory figures (the cgroup's
// processes summed, the largest sum kept) and read once more from the task's zombie before it
// is reaped (FoldEndedIo: the process with every child it reaped), so short tasks count too.
// Not from cgroup blkio/io.stat: on this project's v1 test machine blkio.throttle.io_service_bytes
// stays 0 even for O_DIRECT I/O in a child cgroup, and v2's io.stat needs the io controller,
// which a job's accounting children do not get (see above).
// Virtual memory has no cgroup counter: Sample() reads /proc/<pid>/status (VmSize, VmRSS) of the
// cgroup's processes and keeps the largest sums, as jobacct_gather samples (here each second
// while the step runs, and at each sstat). A task shorter than one sample has MaxVMSize 0. The
// batch script's first sample, at its start, reads the script's own process (SamplePids: no
// cgroup pid list), the later ones every process of its cgroup (session 8).
// Without a cgroup (noded not root, no hierarchy) wait4()'s rusage of the task is the source
// (FromRusage).
//
// Contracts: Create makes the directories (parents too) and is idempotent; Join moves a pid
// (the task, before it execs); Read never fails (missing files read as 0); the job cgroup's
// Remove (cgroup.h RemoveCgroupDir) removes these children with it, RemoveStep earlier.
#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "noded/cgroup.h"
#include "rpc/step_usage.h"
#include "tessera/v1/types.pb.h"

namespace tessera::noded {

struct TaskUsage {
  uint32_t rank = 0;
  uint64_t max_rss_kib = 0;
  uint64_t cur_rss_kib = 0;
  uint64_t max_vmsize_kib = 0;
  uint64_t user_ms = 0;
  uint64_t system_ms = 0;
  uint64_t major_faults = 0;
  // h19 s6: bytes read from / written to block devices; disk_measured false = no counter here.
  bool disk_measured = false;
  uint64_t disk_read_bytes = 0;
  uint64_t disk_write_bytes = 0;
};

// Pure (h19 s6): /proc/<pid>/io text -> rchar, wchar; false when either is missing.
bool ParseProcIo(const std::string& text, uint64_t* rchar, uint64_t* wchar);
// If `pid` (a child of the caller) has ended and is not reaped yet, folds its /proc/<pid>/io
// into *u (largest figures kept). Leaves it unreaped.
void FoldEndedIo(pid_t pid, TaskUsage* u);

class TaskUsageCgroups {
 public:
  // `mounts` as DetectCgroupsOnHost gives them; mode kNone = no cgroups (every call a no-op).
  explicit TaskUsageCgroups(CgroupMounts mounts);
  bool enabled() const;
  // "<job>/step_<id>/task_<rank>" (the batch script's is "<job>/batch": batch_cgroups.h).
  static std::string TaskName(const std::string& job_cgroup, const std::string& step,
                              uint32_t rank);
  Status Create(const std::string& name);
  // Session 8 (issue 20 §2): Create, or, where the cgroup exists already (the batch script's
  // child that a pooled job cgroup keeps, cgroup.h "Pool"; it holds no process), make Read
  // report what happens from now on: v1 cpuacct.stat and memory.stat total_pgmajfault get
  // baselines (the kernel cannot reset them); memory.max_usage_in_bytes is reset to the usage,
  // which is first emptied (memory.force_empty) when above 1 MiB, and that residual usage (the
  // earlier jobs' unreclaimable kernel memory) is a baseline too. A child whose peak cannot be
  // reset, or that keeps more than 1 MiB, is replaced by a new one. v2 (never pooled): an
  // existing one is replaced.
  Status CreateOrReset(const std::string& name);
  // The cgroup.procs files a process writes "0" to, to join (stepd's child).
  std::vector<std::string> ProcsFiles(const std::string& name) const;
  Status Join(const std::string& name, pid_t pid);
  // Folds the current /proc samples of the cgroup's processes into *u (max VmSize, RSS now).
  void Sample(const std::string& name, TaskUsage* u) const;
  // The same for the given processes (session 8: a batch script's first sample, its own pid).
  static void SamplePids(const std::vector<pid_t>& pids, TaskUsage* u);
  // Reads the cgroup's counters into *u (keeps the sampled figures where larger).
  void Read(const std::string& name, TaskUsage* u) const;
  // Removes "<job>/step_<id>" and its tasks.
  void RemoveStep(const std::string& job_cgroup, const std::string& step) const;

 private:
  std::vector<std::string> Dirs(const std::string& name) const;
  struct Baseline {  // counters at CreateOrReset of a reused cgroup (v1)
    uint64_t user_ticks = 0, system_ticks = 0, major_faults = 0, memory_bytes = 0;
  };
  CgroupMounts m_;
  std::map<std::string, Baseline> base_;
};

// wait4's rusage of an ended task (no cgroup): ru_maxrss (KiB), CPU times, major faults.
void FromRusage(const struct rusage& ru, TaskUsage* u);

// One node's tasks -> the proto (node names and task ids filled in).
tessera::v1::StepUsage ToStepUsage(const std::vector<TaskUsage>& tasks, const std::string& node);

// The batch step's usage in the status file: one line of numbers (job_status.h `usage=`).
std::string FormatUsageText(const TaskUsage& u);
bool ParseUsageText(const std::string& text, TaskUsage* u);

}  // namespace tessera::noded
