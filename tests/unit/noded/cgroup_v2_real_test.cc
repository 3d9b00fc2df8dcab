// Issue 19 (h19 s6): the cgroup v2 code paths run against the kernel. The project's machines
// mount cgroup v1 for the controllers; a cgroup2 hierarchy can still be mounted (with no
// controllers of its own: they are bound to v1), and its core files are real: cgroup.procs,
// cgroup.kill, cgroup.freeze, cpu.stat (usage_usec/user_usec/system_usec without the cpu
// controller). So this mounts cgroup2 on a scratch directory and runs, for real: mode detection
// from /proc/mounts, CgroupV2 Create (no limits: memory.max/pids.max need controllers this
// mount cannot have), AddPid, Procs, Freeze, KillAll (cgroup.kill), Remove, and the per-task
// accounting of task_usage.h on v2 (cpu.stat CPU times, /proc samples, /proc/<pid>/io).
// Skipped (with a message) when not root or when the kernel refuses the mount.
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "noded/cgroup.h"
#include "noded/task_usage.h"

namespace tessera::noded {
namespace {

struct Cgroup2Mount {
  std::string dir;
  bool mounted = false;
  Cgroup2Mount() {
    char tmpl[] = "/tmp/tessera-cg2-XXXXXX";
    if (!::mkdtemp(tmpl)) return;
    dir = tmpl;
    mounted = ::mount("none", dir.c_str(), "cgroup2", 0, nullptr) == 0;
    if (!mounted) ::rmdir(dir.c_str());
  }
  ~Cgroup2Mount() {
    if (mounted) ::umount2(dir.c_str(), MNT_DETACH), ::rmdir(dir.c_str());
  }
};

// A child that waits for a byte on `gate`, then burns ~300 ms of CPU, writes 1 MiB to a file
// and exits 0.
pid_t Worker(int gate, const std::string& file) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  char c;
  if (::read(gate, &c, 1) != 1) ::_exit(2);
  timespec t0{}, t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  volatile uint64_t x = 0;
  do {
    for (int i = 0; i < 100000; ++i) x = x + static_cast<uint64_t>(i);
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 300);
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  static char buf[1 << 16];
  for (int i = 0; i < 16 && fd >= 0; ++i)
    if (::write(fd, buf, sizeof buf) != static_cast<ssize_t>(sizeof buf)) ::_exit(3);
  ::_exit(0);
}

TEST_CASE("cgroup v2 for real on a cgroup2 mount: job cgroup and per-task accounting",
          "[cgroupv2]") {
  if (::geteuid() != 0) {
    WARN("not root: cgroup v2 test skipped");
    return;
  }
  Cgroup2Mount mnt;
  if (!mnt.mounted) {
    WARN(std::string("cannot mount cgroup2 here (") + std::strerror(errno) + "): skipped");
    return;
  }
  CgroupMounts m = DetectCgroupsOnHost(mnt.dir);  // from the real /proc/mounts
  REQUIRE(m.mode == CgroupMode::kV2);
  REQUIRE(m.unified == mnt.dir);
  auto cg = MakeCgroupManager(m);
  REQUIRE(cg);
  CHECK(cg->mode() == CgroupMode::kV2);
  const std::string top = "tessera-v2test-" + std::to_string(::getpid());
  const std::string job = top + "/job_1";
  CgroupSpec spec;
  spec.name = job;
  REQUIRE(cg->Create(spec).ok());
  struct stat st {};
  REQUIRE(::stat((mnt.dir + "/" + job + "/cgroup.procs").c_str(), &st) == 0);

  TaskUsageCgroups usage(m);
  REQUIRE(usage.enabled());
  const std::string task = TaskUsageCgroups::TaskName(job, "step_0", 0);
  REQUIRE(usage.Create(task).ok());
  int gate[2];
  REQUIRE(::pipe(gate) == 0);
  std::string file = mnt.dir + ".out";
  pid_t child = Worker(gate[0], file);
  REQUIRE(child > 0);
  REQUIRE(usage.Join(task, child).ok());
  auto in_task = cg->Procs(task);
  REQUIRE(in_task.ok());
  CHECK(*in_task == std::vector<pid_t>{child});
  TaskUsage u;
  u.rank = 0;
  usage.Sample(task, &u);  // VmSize/RSS of the waiting child
  CHECK(u.max_vmsize_kib > 0);
  CHECK(u.max_rss_kib > 0);
  REQUIRE(::write(gate[1], "x", 1) == 1);
  siginfo_t info{};
  REQUIRE(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) == 0);
  FoldEndedIo(child, &u);  // its /proc/<pid>/io as a zombie
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WEXITSTATUS(status) == 0);
  usage.Read(task, &u);  // cpu.stat of the (now empty) task cgroup
  CHECK(u.user_ms + u.system_ms >= 250);
  CHECK(u.disk_measured);
  CHECK(u.disk_write_bytes >= (1u << 20));
  ::unlink(file.c_str());

  // A process in the job's cgroup: frozen, then killed through cgroup.kill.
  pid_t sleeper = ::fork();
  if (sleeper == 0) {
    ::pause();
    ::_exit(0);
  }
  REQUIRE(cg->AddPid(job, sleeper).ok());
  CHECK(cg->Freeze(job, true).ok());
  CHECK(cg->Freeze(job, false).ok());
  REQUIRE(cg->KillAll(job).ok());
  REQUIRE(::waitpid(sleeper, &status, 0) == sleeper);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);

  usage.RemoveStep(job, "step_0");
  CHECK(cg->Remove(job).ok());
  CHECK(::rmdir((mnt.dir + "/" + top).c_str()) == 0);
}

TEST_CASE("/proc/<pid>/io parsing (rchar, wchar) as Slurm's jobacct_gather reads it", "[usage]") {
  uint64_t r = 0, w = 0;
  CHECK(ParseProcIo("rchar: 3089822\nwchar: 139463\nsyscr: 159\nsyscw: 178\nread_bytes: 0\n"
                    "write_bytes: 4096\ncancelled_write_bytes: 0\n", &r, &w));
  CHECK(r == 3089822);
  CHECK(w == 139463);
  CHECK_FALSE(ParseProcIo("syscr: 1\n", &r, &w));
  TaskUsage u;
  u.max_rss_kib = 1;
  u.disk_measured = true;
  u.disk_read_bytes = 10;
  u.disk_write_bytes = 20;
  TaskUsage back;
  REQUIRE(ParseUsageText(FormatUsageText(u), &back));
  CHECK(back.disk_measured);
  CHECK(back.disk_write_bytes == 20);
  REQUIRE(ParseUsageText("1 2 3 4 5", &back));  // an older stepd's line: no disk figures
  CHECK_FALSE(back.disk_measured);
}

}  // namespace
}  // namespace tessera::noded
