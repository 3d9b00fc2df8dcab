// tessera-bench-cgroup: the per-job cgroup cost of a batch job, without a cluster (issue 20 §2).
// Runs N times what stepd does for a job's cgroups (noded/batch_cgroups.h): Setup with a plan
// like noded's (cores, memory limit, pids limit, the standard device list), a vfork'ed child
// that joins every cgroup.procs file and execs /bin/true, waitpid, the accounting read,
// Teardown. With --none the same loop without cgroups (the process floor). Prints wall time,
// this process's CPU (user+sys, children included) and the whole machine's CPU (/proc/stat:
// kernel workers that free cgroups count too) per job, and checks that no job cgroup is left.
// --no-pool: every cgroup removed and made anew (the path before issue 20's pool).
// Usage: tessera-bench-cgroup [-n N] [--root /sys/fs/cgroup] [--none] [--no-pool]   (root only)
#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "noded/batch_cgroups.h"

using namespace tessera::noded;
using tessera::Status;

namespace {

double Now() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

double SelfCpu() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

double ProcessCpu() {
  rusage s{}, c{};
  getrusage(RUSAGE_SELF, &s);
  getrusage(RUSAGE_CHILDREN, &c);
  auto tv = [](const timeval& v) { return v.tv_sec + v.tv_usec / 1e6; };
  return tv(s.ru_utime) + tv(s.ru_stime) + tv(c.ru_utime) + tv(c.ru_stime);
}

// Busy seconds of the whole machine (user+nice+system+irq+softirq+steal).
double MachineCpu() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  unsigned long long v[8] = {};
  in >> cpu;
  for (auto& x : v) in >> x;
  return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / double(sysconf(_SC_CLK_TCK));
}

}  // namespace

int main(int argc, char** argv) {
  int n = 500;
  std::string root = "/sys/fs/cgroup";
  bool none = false, pool = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-n" && i + 1 < argc) n = std::atoi(argv[++i]);
    else if (a == "--root" && i + 1 < argc) root = argv[++i];
    else if (a == "--none") none = true;
    else if (a == "--no-pool") pool = false;
    else {
      std::fprintf(stderr, "usage: tessera-bench-cgroup [-n N] [--root DIR] [--none] [--no-pool]\n");
      return 2;
    }
  }
  JobIsolation iso;
  iso.cgroup_root = root;
  iso.cgroup.cpus = "0";
  iso.cgroup.memory_bytes = 256ull << 20;
  iso.cgroup.pids_max = 16384;
  iso.cgroup.restrict_devices = true;
  iso.cgroup.devices = StandardDeviceRules();
  std::string parent = "tessera/bench-cgroup-" + std::to_string(getpid());
  double setup_s = 0, teardown_s = 0;
  double t0 = Now(), c0 = ProcessCpu(), m0 = MachineCpu();
  for (int j = 0; j < n; ++j) {
    iso.cgroup.name = parent + "/job_" + std::to_string(j + 1);
    BatchCgroups cg;
    std::vector<std::string> files;
    double s0 = SelfCpu();
    if (!none) {
      std::vector<std::string> warnings;
      if (Status st = cg.Setup(iso, &warnings); !st.ok()) {
        std::fprintf(stderr, "setup: %s\n", st.message().c_str());
        return 1;
      }
      for (const auto& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
      files = cg.JoinFiles();
    }
    setup_s += SelfCpu() - s0;
    std::vector<const char*> paths;
    for (const auto& f : files) paths.push_back(f.c_str());
    pid_t pid = vfork();
    if (pid == 0) {
      for (const char* p : paths) {
        int fd = open(p, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, "0", 1) != 1) _exit(120);
        close(fd);
      }
      execl("/bin/true", "true", static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "job %d: child status %d\n", j, status);
      return 1;
    }
    s0 = SelfCpu();
    if (!none) {
      TaskUsage u;
      if (cg.usage()) cg.usage()->Read(cg.acct(), &u);
      if (Status st = cg.Teardown(pool); !st.ok()) {
        std::fprintf(stderr, "teardown: %s\n", st.message().c_str());
        return 1;
      }
    }
    teardown_s += SelfCpu() - s0;
  }
  double t1 = Now(), c1 = ProcessCpu(), m1 = MachineCpu();
  // Nothing of the jobs may be left (the parent is removed after the check).
  int left = 0;
  if (!none) {
    CgroupMounts m = DetectCgroupsOnHost(root);
    std::vector<std::string> dirs;
    if (m.mode == CgroupMode::kV2) dirs.push_back(m.unified + "/" + parent);
    for (const auto& [ctrl, mount] : m.v1) dirs.push_back(mount + "/" + parent);
    for (const auto& d : dirs) {
      for (int j = 0; j < n; ++j)
        left += access((d + "/job_" + std::to_string(j + 1)).c_str(), F_OK) == 0;
      (void)RemoveCgroupDir(d);
    }
  }
  std::printf("%s jobs=%d wall_ms_per_job=%.3f cpu_ms_per_job=%.3f machine_cpu_ms_per_job=%.3f "
              "setup_cpu_ms=%.3f teardown_cpu_ms=%.3f left=%d\n", none ? "none" : pool ? "cgroup" : "cgroup-no-pool", n,
              (t1 - t0) * 1e3 / n, (c1 - c0) * 1e3 / n, (m1 - m0) * 1e3 / n, setup_s * 1e3 / n,
              teardown_s * 1e3 / n, left);
  return left == 0 ? 0 : 1;
}
