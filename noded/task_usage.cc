#include "noded/task_usage.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "common/file_io.h"

namespace tessera::noded {
namespace {

uint64_t Number(const std::string& path) {
  auto t = ReadFile(path);
  return t.ok() ? std::strtoull(t->c_str(), nullptr, 10) : 0;
}

uint64_t Keyed(const std::string& path, const std::string& key) {
  auto t = ReadFile(path);
  if (!t.ok()) return 0;
  int64_t v = KeyedValue(*t, key);
  return v > 0 ? static_cast<uint64_t>(v) : 0;
}

bool Exists(const std::string& p) { return ::access(p.c_str(), F_OK) == 0; }

// Cumulative I/O counters: the largest reading wins (h19 s6).
void FoldIo(uint64_t r, uint64_t w, TaskUsage* u) {
  u->disk_measured = true;
  u->disk_read_bytes = std::max(u->disk_read_bytes, r);
  u->disk_write_bytes = std::max(u->disk_write_bytes, w);
}

// mkdir -p of root/name, the leaf tried first (its parents usually exist: the job's cgroup).
Status MakeAll(const std::string& root, const std::string& name) {
  std::string path = root + "/" + name;
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return Status::Ok();
  if (errno == ENOENT && name.find('/') != std::string::npos) {
    TESSERA_RETURN_IF_ERROR(MakeAll(root, name.substr(0, name.rfind('/'))));
    if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return Status::Ok();
  }
  return Internal("cannot create cgroup " + path + ": " + std::strerror(errno));
}

// "VmSize:\t  1234 kB" -> 1234.
uint64_t StatusKib(const std::string& text, const char* key) {
  size_t at = text.find(key);
  if (at == std::string::npos) return 0;
  return std::strtoull(text.c_str() + at + std::strlen(key), nullptr, 10);
}

}  // namespace

TaskUsageCgroups::TaskUsageCgroups(CgroupMounts mounts) : m_(std::move(mounts)) {}

bool TaskUsageCgroups::enabled() const { return !Dirs("x").empty(); }

std::string TaskUsageCgroups::TaskName(const std::string& job_cgroup, const std::string& step,
                                       uint32_t rank) {
  return job_cgroup + "/" + step + "/task_" + std::to_string(rank);
}

std::vector<std::string> TaskUsageCgroups::Dirs(const std::string& name) const {
  std::vector<std::string> out;
  if (m_.mode == CgroupMode::kV2) out.push_back(m_.unified + "/" + name);
  if (m_.mode == CgroupMode::kV1)
    for (const char* c : {"memory", "cpuacct"}) {
      auto it = m_.v1.find(c);
      if (it != m_.v1.end()) out.push_back(it->second + "/" + name);
    }
  return out;
}

Status TaskUsageCgroups::Create(const std::string& name) {
  if (m_.mode == CgroupMode::kV2) return MakeAll(m_.unified, name);
  for (const char* c : {"memory", "cpuacct"}) {
    auto it = m_.v1.find(c);
    if (it != m_.v1.end()) TESSERA_RETURN_IF_ERROR(MakeAll(it->second, name));
  }
  return Status::Ok();
}

Status TaskUsageCgroups::CreateOrReset(const std::string& name) {
  base_.erase(name);
  if (m_.mode == CgroupMode::kV2) {
    std::string d = m_.unified + "/" + name;
    if (Exists(d)) TESSERA_RETURN_IF_ERROR(RemoveCgroupDir(d));
    return MakeAll(m_.unified, name);
  }
  if (m_.mode != CgroupMode::kV1) return Status::Ok();
  Baseline b;
  bool reused = false;
  constexpr uint64_t kResidual = 1 << 20;
  if (auto it = m_.v1.find("cpuacct"); it != m_.v1.end()) {
    std::string d = it->second + "/" + name;
    if (::mkdir(d.c_str(), 0755) == 0) {
    } else if (errno == EEXIST) {
      auto stat = ReadFile(d + "/cpuacct.stat");
      int64_t user = stat.ok() ? KeyedValue(*stat, "user") : -1;
      int64_t sys = stat.ok() ? KeyedValue(*stat, "system") : -1;
      if (user < 0 || sys < 0) {  // no counters to start from: a new child
        TESSERA_RETURN_IF_ERROR(RemoveCgroupDir(d));
        TESSERA_RETURN_IF_ERROR(MakeAll(it->second, name));
      } else {
        b.user_ticks = static_cast<uint64_t>(user), b.system_ticks = static_cast<uint64_t>(sys);
        reused = true;
      }
    } else {
      TESSERA_RETURN_IF_ERROR(MakeAll(it->second, name));
    }
  }
  if (auto it = m_.v1.find("memory"); it != m_.v1.end()) {
    std::string d = it->second + "/" + name;
    int err = ::mkdir(d.c_str(), 0755) == 0 ? 0 : errno;
    if (err != 0 && err != EEXIST) TESSERA_RETURN_IF_ERROR(MakeAll(it->second, name));
    if (err == EEXIST) {
      if (Number(d + "/memory.usage_in_bytes") > kResidual)
        (void)WriteCgroupFile(d + "/memory.force_empty", "0");  // earlier jobs' page cache
      bool reset = WriteCgroupFile(d + "/memory.max_usage_in_bytes", "0").ok();
      uint64_t residual = Number(d + "/memory.usage_in_bytes");
      if (reset && residual <= kResidual) {
        b.memory_bytes = residual;
        b.major_faults = Keyed(d + "/memory.stat", "total_pgmajfault");
        reused = true;
      } else {
        TESSERA_RETURN_IF_ERROR(RemoveCgroupDir(d));
        TESSERA_RETURN_IF_ERROR(MakeAll(it->second, name));
      }
    }
  }
  if (reused) base_[name] = b;
  return Status::Ok();
}

std::vector<std::string> TaskUsageCgroups::ProcsFiles(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& d : Dirs(name)) out.push_back(d + "/cgroup.procs");
  return out;
}

Status TaskUsageCgroups::Join(const std::string& name, pid_t pid) {
  for (const auto& f : ProcsFiles(name))
    TESSERA_RETURN_IF_ERROR(WriteCgroupFile(f, std::to_string(pid)));
  return Status::Ok();
}

void TaskUsageCgroups::Sample(const std::string& name, TaskUsage* u) const {
  auto dirs = Dirs(name);
  if (dirs.empty()) return;
  auto procs = ReadFile(dirs[0] + "/cgroup.procs");
  if (!procs.ok()) return;
  SamplePids(ParsePidList(*procs), u);
}

void TaskUsageCgroups::SamplePids(const std::vector<pid_t>& pids, TaskUsage* u) {
  uint64_t vm = 0, rss = 0, rchar = 0, wchar = 0;
  bool io = false;
  for (pid_t p : pids) {
    auto st = ReadFile("/proc/" + std::to_string(p) + "/status");
    if (!st.ok()) continue;
    vm += StatusKib(*st, "VmSize:");
    rss += StatusKib(*st, "VmRSS:");
    uint64_t r = 0, w = 0;
    if (auto t = ReadFile("/proc/" + std::to_string(p) + "/io"); t.ok() && ParseProcIo(*t, &r, &w))
      rchar += r, wchar += w, io = true;
  }
  if (io) FoldIo(rchar, wchar, u);
  u->max_vmsize_kib = std::max(u->max_vmsize_kib, vm);
  u->max_rss_kib = std::max(u->max_rss_kib, rss);
  u->cur_rss_kib = rss;
}

void TaskUsageCgroups::Read(const std::string& name, TaskUsage* u) const {
  if (m_.mode == CgroupMode::kV2) {
    std::string d = m_.unified + "/" + name;
    u->user_ms = Keyed(d + "/cpu.stat", "user_usec") / 1000;
    u->system_ms = Keyed(d + "/cpu.stat", "system_usec") / 1000;
    if (Exists(d + "/memory.peak"))
      u->max_rss_kib = std::max(u->max_rss_kib, Number(d + "/memory.peak") / 1024);
    if (Exists(d + "/memory.current")) u->cur_rss_kib = Number(d + "/memory.current") / 1024;
    if (Exists(d + "/memory.stat")) u->major_faults = Keyed(d + "/memory.stat", "pgmajfault");
    return;
  }
  if (m_.mode != CgroupMode::kV1) return;
  Baseline b;  // zero for a new cgroup
  if (auto it = base_.find(name); it != base_.end()) b = it->second;
  auto minus = [](uint64_t v, uint64_t base) { return v > base ? v - base : 0; };
  if (auto it = m_.v1.find("memory"); it != m_.v1.end()) {
    std::string d = it->second + "/" + name;
    u->max_rss_kib = std::max(
        u->max_rss_kib, minus(Number(d + "/memory.max_usage_in_bytes"), b.memory_bytes) / 1024);
    u->cur_rss_kib = minus(Number(d + "/memory.usage_in_bytes"), b.memory_bytes) / 1024;
    u->major_faults = minus(Keyed(d + "/memory.stat", "total_pgmajfault"), b.major_faults);
  }
  if (auto it = m_.v1.find("cpuacct"); it != m_.v1.end()) {
    auto stat = ReadFile(it->second + "/" + name + "/cpuacct.stat");
    long hz = ::sysconf(_SC_CLK_TCK);
    if (hz <= 0) hz = 100;
    auto ticks = [&](const char* key) {
      int64_t v = stat.ok() ? KeyedValue(*stat, key) : 0;
      return v > 0 ? static_cast<uint64_t>(v) : 0;
    };
    u->user_ms = minus(ticks("user"), b.user_ticks) * 1000 / static_cast<uint64_t>(hz);
    u->system_ms = minus(ticks("system"), b.system_ticks) * 1000 / static_cast<uint64_t>(hz);
  }
}

bool ParseProcIo(const std::string& text, uint64_t* rchar, uint64_t* wchar) {
  size_t r = text.find("rchar:"), w = text.find("wchar:");
  if (r == std::string::npos || w == std::string::npos) return false;
  *rchar = std::strtoull(text.c_str() + r + 6, nullptr, 10);
  *wchar = std::strtoull(text.c_str() + w + 6, nullptr, 10);
  return true;
}

void FoldEndedIo(pid_t pid, TaskUsage* u) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != pid)
    return;
  auto t = ReadFile("/proc/" + std::to_string(pid) + "/io");
  uint64_t r = 0, w = 0;
  if (t.ok() && ParseProcIo(*t, &r, &w)) FoldIo(r, w, u);
}

void TaskUsageCgroups::RemoveStep(const std::string& job_cgroup, const std::string& step) const {
  for (const auto& d : Dirs(job_cgroup + "/" + step)) (void)RemoveCgroupDir(d);
}

void FromRusage(const struct rusage& ru, TaskUsage* u) {
  u->max_rss_kib = std::max<uint64_t>(u->max_rss_kib, static_cast<uint64_t>(ru.ru_maxrss));
  u->user_ms = static_cast<uint64_t>(ru.ru_utime.tv_sec) * 1000 + ru.ru_utime.tv_usec / 1000;
  u->system_ms = static_cast<uint64_t>(ru.ru_stime.tv_sec) * 1000 + ru.ru_stime.tv_usec / 1000;
  u->major_faults = static_cast<uint64_t>(ru.ru_majflt);
}

tessera::v1::StepUsage ToStepUsage(const std::vector<TaskUsage>& tasks, const std::string& node) {
  tessera::v1::StepUsage out;
  for (const auto& t : tasks) {
    tessera::v1::StepUsage one;
    one.set_ntasks(1);
    one.set_max_rss_kib(t.max_rss_kib);
    one.set_max_rss_node(node);
    one.set_max_rss_task(t.rank);
    one.set_sum_rss_kib(t.max_rss_kib);
    one.set_max_vmsize_kib(t.max_vmsize_kib);
    one.set_max_vmsize_node(node);
    one.set_max_vmsize_task(t.rank);
    one.set_sum_vmsize_kib(t.max_vmsize_kib);
    one.set_min_cpu_ms(t.user_ms + t.system_ms);
    one.set_min_cpu_node(node);
    one.set_min_cpu_task(t.rank);
    one.set_user_cpu_ms(t.user_ms);
    one.set_system_cpu_ms(t.system_ms);
    one.set_max_pages(t.major_faults);
    one.set_max_pages_node(node);
    one.set_max_pages_task(t.rank);
    one.set_sum_pages(t.major_faults);
    one.set_cur_rss_kib(t.cur_rss_kib);
    if (t.disk_measured) {
      one.set_disk_measured(true);
      one.set_max_disk_read_bytes(t.disk_read_bytes);
      one.set_max_disk_read_node(node);
      one.set_max_disk_read_task(t.rank);
      one.set_sum_disk_read_bytes(t.disk_read_bytes);
      one.set_max_disk_write_bytes(t.disk_write_bytes);
      one.set_max_disk_write_node(node);
      one.set_max_disk_write_task(t.rank);
      one.set_sum_disk_write_bytes(t.disk_write_bytes);
    }
    rpc::AddStepUsage(one, &out);
  }
  return out;
}

std::string FormatUsageText(const TaskUsage& u) {
  return std::to_string(u.max_rss_kib) + " " + std::to_string(u.max_vmsize_kib) + " " +
         std::to_string(u.user_ms) + " " + std::to_string(u.system_ms) + " " +
         std::to_string(u.major_faults) +
         (u.disk_measured ? " " + std::to_string(u.disk_read_bytes) + " " +
                                std::to_string(u.disk_write_bytes)
                          : "");
}

bool ParseUsageText(const std::string& text, TaskUsage* u) {
  std::istringstream in(text);
  TaskUsage v;
  if (!(in >> v.max_rss_kib >> v.max_vmsize_kib >> v.user_ms >> v.system_ms >> v.major_faults))
    return false;
  if (in >> v.disk_read_bytes >> v.disk_write_bytes) v.disk_measured = true;  // h19 s6
  else v.disk_read_bytes = v.disk_write_bytes = 0;
  *u = v;
  return true;
}

}  // namespace tessera::noded
