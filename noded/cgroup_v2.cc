// cgroup v2 (see cgroup.h): <root>/tessera/<node>/job_<id>.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include "common/file_io.h"
#include "noded/bpf_device.h"
#include "noded/cgroup_impl.h"

namespace tessera::noded {

// mkdir of every component; each ancestor (root included) gets the controllers it offers among
// cpuset, memory and pids added to cgroup.subtree_control so the job's directory has them.
Status CgroupV2::EnableControllers(const std::string& name) {
  std::string path = m_.unified;
  size_t pos = 0;
  while (pos <= name.size()) {
    auto avail = ReadFile(path + "/cgroup.controllers");
    std::string want;
    if (avail.ok()) {
      std::istringstream in(*avail);
      for (std::string c; in >> c;)
        if (c == "cpuset" || c == "memory" || c == "pids") want += (want.empty() ? "+" : " +") + c;
    }
    if (!want.empty()) {
      Status st = WriteCgroupFile(path + "/cgroup.subtree_control", want);
      if (!st.ok()) return st;
    }
    size_t next = name.find('/', pos);
    if (next == std::string::npos) next = name.size();
    path += "/" + name.substr(pos, next - pos);
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
      return Internal("cannot create cgroup " + path + ": " + std::strerror(errno));
    pos = next + 1;
  }
  return Status::Ok();
}

Status CgroupV2::Create(const CgroupSpec& s) {
  (void)KillAll(s.name);  // a stale cgroup of the same name (a dead job's) would keep its limits
  (void)Remove(s.name);
  Status st = EnableControllers(s.name);
  std::string d = Dir(s.name);
  auto has = [&](const std::string& f) { return ::access((d + "/" + f).c_str(), F_OK) == 0; };
  if (st.ok() && !s.cpus.empty() && has("cpuset.cpus"))
    st = WriteCgroupFile(d + "/cpuset.cpus", s.cpus);
  if (st.ok() && s.memory_bytes > 0) {
    st = WriteCgroupFile(d + "/memory.max", std::to_string(s.memory_bytes));
    if (st.ok() && has("memory.swap.max")) st = WriteCgroupFile(d + "/memory.swap.max", "0");
  }
  if (st.ok() && s.pids_max > 0) st = WriteCgroupFile(d + "/pids.max", std::to_string(s.pids_max));
  if (!st.ok()) {
    (void)Remove(s.name);
    return st;
  }
  if (s.restrict_devices) {
    Status dev = AttachDeviceProgram(d, BuildDeviceProgram(s.devices));
    if (!dev.ok()) warnings_.push_back("device restriction not applied: " + dev.message());
  }
  return Status::Ok();
}

std::vector<std::string> CgroupV2::ProcsFiles(const std::string& name) const {
  return {Dir(name) + "/cgroup.procs"};
}

Status CgroupV2::AddPid(const std::string& name, pid_t pid) {
  return WriteCgroupFile(Dir(name) + "/cgroup.procs", std::to_string(pid));
}

// With the processes of the job's child cgroups (the accounting cgroups of its tasks,
// task_usage.h, issue 19).
static void ChildProcs(const std::string& dir, std::vector<pid_t>* out) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> kids;
  while (dirent* e = ::readdir(d))
    if (e->d_type == DT_DIR && e->d_name[0] != '.') kids.push_back(dir + "/" + e->d_name);
  ::closedir(d);
  for (const auto& k : kids) {
    auto t = ReadFile(k + "/cgroup.procs");
    if (t.ok())
      for (pid_t p : ParsePidList(*t)) out->push_back(p);
    ChildProcs(k, out);
  }
}

Result<std::vector<pid_t>> CgroupV2::Procs(const std::string& name) {
  auto t = ReadFile(Dir(name) + "/cgroup.procs");
  if (!t.ok()) return t.status();
  std::vector<pid_t> out = ParsePidList(*t);
  ChildProcs(Dir(name), &out);
  return out;
}

Status CgroupV2::Freeze(const std::string& name, bool frozen) {
  std::string f = Dir(name) + "/cgroup.freeze";
  if (::access(f.c_str(), F_OK) != 0) return Status(Code::kUnimplemented, "no cgroup.freeze");
  return WriteCgroupFile(f, frozen ? "1" : "0");
}

bool CgroupV2::EmptyByCounter(const std::string& name) const {
  auto ev = ReadFile(Dir(name) + "/cgroup.events");
  return ev.ok() && KeyedValue(*ev, "populated") == 0;
}

Status CgroupV2::KillAll(const std::string& name) {
  std::string d = Dir(name);
  if (EmptyByCounter(name)) return Status::Ok();  // session 8: the usual case at a job's end
  bool kill_file = ::access((d + "/cgroup.kill").c_str(), F_OK) == 0;
  bool freeze = ::access((d + "/cgroup.freeze").c_str(), F_OK) == 0;
  for (int round = 0; round < 100; ++round) {
    if (round > 0 && EmptyByCounter(name)) return Status::Ok();
    auto procs = Procs(name);
    if (!procs.ok() || procs->empty()) return Status::Ok();
    if (kill_file) {
      (void)WriteCgroupFile(d + "/cgroup.kill", "1");
    } else {
      if (freeze) (void)WriteCgroupFile(d + "/cgroup.freeze", "1");
      for (pid_t p : *procs) ::kill(p, SIGKILL);
      if (freeze) (void)WriteCgroupFile(d + "/cgroup.freeze", "0");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Internal("processes of cgroup " + name + " survived SIGKILL for 5 s");
}

Result<bool> CgroupV2::OomKilled(const std::string& name) {
  auto ev = ReadFile(Dir(name) + "/memory.events");
  if (!ev.ok()) return false;  // no memory controller: no limit, no OOM kill of ours
  return KeyedValue(*ev, "oom_kill") > 0;
}

Status CgroupV2::Remove(const std::string& name) { return RemoveCgroupDir(Dir(name)); }

}  // namespace tessera::noded
