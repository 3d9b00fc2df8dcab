// cgroup v1 (see cgroup.h). Hierarchy per controller: <mount>/tessera/<node>/job_<id>.
#include <signal.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>
#include <algorithm>

#include "common/file_io.h"
#include "noded/cgroup_impl.h"

namespace tessera::noded {
namespace {

const char* kV1Controllers[] = {"cpuset", "memory", "devices", "pids", "freezer"};

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// With the root cpuset balancing all CPUs (the default) a job cpuset's own sched_load_balance
// changes nothing about scheduling, but while it is 1 the kernel rebuilds the scheduler domains
// on every cpuset.cpus write and at rmdir (milliseconds of CPU per job). Set while cpus is
// still empty, so this write itself triggers no rebuild either. Best effort.
void NoSchedDomainRebuilds(const std::string& dir) {
  (void)WriteCgroupFile(dir + "/cpuset.sched_load_balance", "0");
}

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Session 8: the pool of one parent is claimed from and released to under an exclusive flock on
// the parent's directory in the deciding hierarchy (stepds of one node are separate processes).
// Without it, jobs ending together raced for the same free slot and the losers removed their
// cgroups (and the next jobs made new ones): in a 1,000-job burst most jobs missed the pool.
// No lock (open fails: no parent yet, nothing pooled) is fine: the renames stay safe, only a
// slot may then be lost to a race.
class PoolLock {
 public:
  explicit PoolLock(const std::string& dir)
      : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~PoolLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  PoolLock(const PoolLock&) = delete;
  PoolLock& operator=(const PoolLock&) = delete;

 private:
  int fd_;
};

std::string ParentOf(const std::string& dir) { return dir.substr(0, dir.rfind('/')); }

}  // namespace

// v1 counts an OOM kill in the victim's own memory cgroup only: the job's tasks live in
// accounting children (task_usage.h, issue 19), so their counters count too. -1: no counter.
static int64_t OomKillsUnder(const std::string& dir) {
  auto oc = ReadFile(dir + "/memory.oom_control");
  if (!oc.ok()) return -1;
  int64_t kills = KeyedValue(*oc, "oom_kill");
  if (kills < 0) return -1;
  if (DIR* d = ::opendir(dir.c_str())) {
    std::vector<std::string> kids;
    while (dirent* e = ::readdir(d))
      if (e->d_type == DT_DIR && e->d_name[0] != '.') kids.push_back(dir + "/" + e->d_name);
    ::closedir(d);
    for (const auto& k : kids) kills += std::max<int64_t>(0, OomKillsUnder(k));
  }
  return kills;
}

std::string CgroupV1::Dir(const std::string& ctrl, const std::string& name) const {
  return m_.v1.at(ctrl) + "/" + name;
}

// Creates every component of `name`; cpuset parents get cpus/mems copied from their parent
// (a v1 cpuset cgroup with empty cpuset.cpus cannot hold tasks).
Status CgroupV1::MakeDirs(const std::string& ctrl, const std::string& name) {
  std::string path = m_.v1.at(ctrl);
  size_t pos = 0;
  while (pos <= name.size()) {
    size_t next = name.find('/', pos);
    if (next == std::string::npos) next = name.size();
    std::string parent = path;
    path += "/" + name.substr(pos, next - pos);
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
      return Internal("cannot create cgroup " + path + ": " + std::strerror(errno));
    if (ctrl == "cpuset") {
      if (next == name.size()) NoSchedDomainRebuilds(path);
      for (const char* f : {"cpuset.cpus", "cpuset.mems"}) {
        auto cur = ReadFile(path + "/" + f);
        if (cur.ok() && !Trim(*cur).empty()) continue;
        auto up = ReadFile(parent + "/" + f);
        if (up.ok()) TESSERA_RETURN_IF_ERROR(WriteCgroupFile(path + "/" + f, Trim(*up)));
      }
    }
    pos = next + 1;
  }
  return Status::Ok();
}

Status CgroupV1::ApplyLimits(const CgroupSpec& s, bool reused) {
  if (Has("cpuset") && (!s.cpus.empty() || reused)) {
    std::string cpus = s.cpus;
    if (cpus.empty()) {  // a reused cpuset gets its parent's CPUs back, as a new one has
      std::string d = Dir("cpuset", s.name);
      auto up = ReadFile(d.substr(0, d.rfind('/')) + "/cpuset.cpus");
      if (!up.ok()) return up.status();
      cpus = Trim(*up);
    }
    TESSERA_RETURN_IF_ERROR(WriteCgroupFile(Dir("cpuset", s.name) + "/cpuset.cpus", cpus));
  }
  if (Has("memory") && (s.memory_bytes > 0 || reused)) {
    std::string d = Dir("memory", s.name);
    std::string v = s.memory_bytes > 0 ? std::to_string(s.memory_bytes) : "-1";
    // Without swap accounting the limit could be escaped into swap. memsw may never be below
    // the limit: a reused cgroup's is lifted first.
    bool memsw = ::access((d + "/memory.memsw.limit_in_bytes").c_str(), F_OK) == 0;
    if (memsw && reused)
      TESSERA_RETURN_IF_ERROR(WriteCgroupFile(d + "/memory.memsw.limit_in_bytes", "-1"));
    TESSERA_RETURN_IF_ERROR(WriteCgroupFile(d + "/memory.limit_in_bytes", v));
    if (memsw && s.memory_bytes > 0)
      TESSERA_RETURN_IF_ERROR(WriteCgroupFile(d + "/memory.memsw.limit_in_bytes", v));
  }
  if (Has("pids") && (s.pids_max > 0 || reused))
    TESSERA_RETURN_IF_ERROR(WriteCgroupFile(
        Dir("pids", s.name) + "/pids.max", s.pids_max > 0 ? std::to_string(s.pids_max) : "max"));
  if (Has("devices") && s.restrict_devices) {
    std::string d = Dir("devices", s.name);
    TESSERA_RETURN_IF_ERROR(WriteCgroupFile(d + "/devices.deny", "a"));
    std::vector<std::string> rules;
    for (const auto& r : s.devices) rules.push_back(DeviceRuleText(r));
    TESSERA_RETURN_IF_ERROR(WriteCgroupValues(d + "/devices.allow", rules));
  } else if (Has("devices") && reused) {
    TESSERA_RETURN_IF_ERROR(WriteCgroupFile(Dir("devices", s.name) + "/devices.allow", "a"));
  }
  return Status::Ok();
}

Status CgroupV1::MakeLeaves(const CgroupSpec& s) {
  for (const char* c : kV1Controllers) {
    if (!Has(c)) continue;
    std::string leaf = Dir(c, s.name);
    if (::mkdir(leaf.c_str(), 0755) == 0) {
      if (std::string(c) != "cpuset") continue;
      NoSchedDomainRebuilds(leaf);
      // A new v1 cpuset cgroup starts empty; cpus come from the spec (ApplyLimits) or the parent.
      // The parent may itself be brand new (a concurrent stepd made it and has not filled it
      // yet): then fill the whole chain as the first job does.
      std::string parent = leaf.substr(0, leaf.rfind('/'));
      auto cpus = ReadFile(parent + "/cpuset.cpus");
      auto mems = ReadFile(parent + "/cpuset.mems");
      if (!cpus.ok() || !mems.ok() || Trim(*cpus).empty() || Trim(*mems).empty()) {
        TESSERA_RETURN_IF_ERROR(MakeDirs(c, s.name));
        continue;
      }
      TESSERA_RETURN_IF_ERROR(WriteCgroupFile(leaf + "/cpuset.mems", Trim(*mems)));
      if (s.cpus.empty())
        TESSERA_RETURN_IF_ERROR(WriteCgroupFile(leaf + "/cpuset.cpus", Trim(*cpus)));
      continue;
    }
    if (errno == EEXIST) return AlreadyExists("cgroup " + leaf + " exists");
    if (errno != ENOENT)
      return Internal("cannot create cgroup " + leaf + ": " + std::strerror(errno));
    TESSERA_RETURN_IF_ERROR(MakeDirs(c, s.name));  // the first job: parents are missing
  }
  return Status::Ok();
}

Status CgroupV1::Create(const CgroupSpec& s) {
  if (Claim(s.name)) {  // issue 20 §2: a pooled cgroup, renamed; every limit written again
    if (Has("memory"))  // the kept accounting child's kills count too (OomKilled sums them)
      oom_base_[s.name] = std::max<int64_t>(0, OomKillsUnder(Dir("memory", s.name)));
    Status st = ApplyLimits(s, /*reused=*/true);
    if (!st.ok()) (void)Remove(s.name);
    return st;
  }
  Status st = MakeLeaves(s);
  if (st.code() == Code::kAlreadyExists) {
    // A stale cgroup of the same name (a dead job's) would keep its limits and processes.
    (void)KillAll(s.name);
    (void)Remove(s.name);
    st = Status::Ok();
    for (const char* c : kV1Controllers)
      if (st.ok() && Has(c)) st = MakeDirs(c, s.name);
  }
  if (st.ok()) st = ApplyLimits(s, /*reused=*/false);
  if (!st.ok()) (void)Remove(s.name);
  return st;
}

std::vector<const char*> CgroupV1::PoolHierarchies() const {
  std::vector<const char*> out;
  for (const char* c : {"freezer", "pids", "memory", "cpuset", "devices", "cpuacct"})
    if (Has(c)) out.push_back(c);
  return out;
}

bool CgroupV1::Claim(const std::string& name) {
  auto hs = PoolHierarchies();
  if (hs.empty()) return false;
  PoolLock lock(ParentOf(Dir(hs[0], name)));
  for (int k = 0; k < kCgroupPoolSlots; ++k) {
    std::string slot = CgroupPoolSlot(name, k);
    if (::rename(Dir(hs[0], slot).c_str(), Dir(hs[0], name).c_str()) != 0) {
      if (errno == ENOENT) continue;
      return false;  // e.g. a stale cgroup of this name: Create's usual path deals with it
    }
    for (size_t i = 1; i < hs.size(); ++i) {
      if (::rename(Dir(hs[i], slot).c_str(), Dir(hs[i], name).c_str()) == 0) continue;
      // The slot's entry is missing here (a crash between two renames): a new directory.
      // A stale one of this name: start over on Create's usual path.
      if (errno != ENOENT || !MakeDirs(hs[i], name).ok()) {  // (MakeDirs: a cpuset's set-up too)
        (void)Remove(name);
        return false;
      }
    }
    return true;
  }
  return false;
}

Status CgroupV1::Release(const std::string& name) {
  auto hs = PoolHierarchies();
  bool poolable = !hs.empty();
  if (poolable && Has("pids")) {  // session 8: the counter, not a pid list
    poolable = EmptyByCounter(name);
  } else if (poolable) {
    auto procs = Procs(name);
    poolable = procs.ok() && procs->empty();
  }
  if (poolable && Has("memory")) {  // OomKilled of a reused cgroup needs the kernel's counter
    auto oc = ReadFile(Dir("memory", name) + "/memory.oom_control");
    poolable = oc.ok() && KeyedValue(*oc, "oom_kill") >= 0;
  }
  // Accounting children: the batch script's stays (its counters get baselines on reuse,
  // TaskUsageCgroups::CreateOrReset), trun steps' go.
  for (const char* c : {"memory", "cpuacct"})
    if (poolable && Has(c)) poolable = RemoveCgroupChildren(Dir(c, name), kPooledAcctChild);
  if (!poolable) return Remove(name);
  {
    PoolLock lock(ParentOf(Dir(hs[0], name)));
    for (int k = 0; k < kCgroupPoolSlots; ++k) {
      std::string slot = CgroupPoolSlot(name, k);
      if (::access(Dir(hs[0], slot).c_str(), F_OK) == 0) continue;  // taken
      // The deciding hierarchy last: a slot is claimable only once it is complete. Where the
      // slot's name is taken (a crash between renames), this job's directory goes.
      for (size_t i = hs.size(); i-- > 1;)
        if (::rename(Dir(hs[i], name).c_str(), Dir(hs[i], slot).c_str()) != 0)
          (void)RemoveCgroupDir(Dir(hs[i], name));
      if (::rename(Dir(hs[0], name).c_str(), Dir(hs[0], slot).c_str()) != 0)
        return RemoveCgroupDir(Dir(hs[0], name));
      oom_base_.erase(name);
      return Status::Ok();
    }
  }
  return Remove(name);  // the pool is full (removed without holding the lock)
}

std::vector<std::string> CgroupV1::ProcsFiles(const std::string& name) const {
  std::vector<std::string> out;
  for (const char* c : kV1Controllers)
    if (Has(c)) out.push_back(Dir(c, name) + "/cgroup.procs");
  return out;
}

Status CgroupV1::AddPid(const std::string& name, pid_t pid_value) {
  std::string pid = std::to_string(pid_value);
  for (const char* c : kV1Controllers)
    if (Has(c)) TESSERA_RETURN_IF_ERROR(WriteCgroupFile(Dir(c, name) + "/cgroup.procs", pid));
  return Status::Ok();
}

Result<std::vector<pid_t>> CgroupV1::Procs(const std::string& name) {
  // Every job process joins every controller; read the first one mounted.
  for (const char* c : {"freezer", "pids", "memory", "cpuset", "devices"}) {
    if (!Has(c)) continue;
    auto t = ReadFile(Dir(c, name) + "/cgroup.procs");
    if (!t.ok()) return t.status();
    return ParsePidList(*t);
  }
  return std::vector<pid_t>{};
}

bool CgroupV1::EmptyByCounter(const std::string& name) const {
  if (!Has("pids")) return false;
  auto t = ReadFile(Dir("pids", name) + "/pids.current");
  return t.ok() && Trim(*t) == "0";
}

Status CgroupV1::KillAll(const std::string& name) {
  bool freezer = Has("freezer");
  std::string state = freezer ? Dir("freezer", name) + "/freezer.state" : "";
  for (int round = 0; round < 100; ++round) {
    // pids.current counts a process until it is reaped, the list only until it exits: the
    // counter's 0 is the stricter answer, and the usual one at a job's end.
    if (EmptyByCounter(name)) return Status::Ok();
    auto procs = Procs(name);
    if (!procs.ok()) return Status::Ok();  // gone already
    if (procs->empty()) return Status::Ok();
    // Frozen processes cannot fork in between; SIGKILL is delivered once thawed.
    if (freezer) (void)WriteCgroupFile(state, "FROZEN");
    for (pid_t p : *procs) ::kill(p, SIGKILL);
    if (freezer) (void)WriteCgroupFile(state, "THAWED");
    SleepMs(50);
  }
  return Internal("processes of cgroup " + name + " survived SIGKILL for 5 s");
}

Status CgroupV1::Freeze(const std::string& name, bool frozen) {
  if (!Has("freezer")) return Status(Code::kUnimplemented, "no v1 freezer hierarchy");
  std::string state = Dir("freezer", name) + "/freezer.state";
  TESSERA_RETURN_IF_ERROR(WriteCgroupFile(state, frozen ? "FROZEN" : "THAWED"));
  for (int i = 0; frozen && i < 20; ++i) {  // FREEZING until every task stopped
    auto t = ReadFile(state);
    if (!t.ok() || t->find("FROZEN") == 0) break;
    SleepMs(50);
  }
  return Status::Ok();
}

Result<bool> CgroupV1::OomKilled(const std::string& name) {
  if (!Has("memory")) return false;
  std::string d = Dir("memory", name);
  int64_t kills = OomKillsUnder(d);  // -1: no counter (or no cgroup: the read below says)
  if (auto base = oom_base_.find(name); kills >= 0 && base != oom_base_.end())
    kills -= base->second;  // a reused cgroup (Create): earlier jobs' kills
  if (kills >= 0) return kills > 0;
  auto oc = ReadFile(d + "/memory.oom_control");
  if (!oc.ok()) return oc.status();
  // Kernels before 4.13 have no oom_kill counter: under_oom or a hit limit is the best sign.
  if (KeyedValue(*oc, "under_oom") > 0) return true;
  auto fail = ReadFile(d + "/memory.failcnt");
  return fail.ok() && std::atoll(fail->c_str()) > 0;
}

Status CgroupV1::Remove(const std::string& name) {
  Status first = Status::Ok();
  // cpuacct: the job's tasks' accounting cgroups only (task_usage.h, issue 19).
  if (Has("cpuacct")) (void)RemoveCgroupDir(Dir("cpuacct", name));
  for (const char* c : kV1Controllers) {
    if (!Has(c)) continue;
    std::string d = Dir(c, name);
    Status st = RemoveCgroupDir(d);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

}  // namespace tessera::noded
