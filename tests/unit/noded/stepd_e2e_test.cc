// End-to-end tests of the real tessera-stepd (and noded's launch path through it). They need
// root (to switch to an unprivileged user) and create the user `tessera-test` when it is absent.
// Binaries come from $TESSERA_BUILD_DIR/bin.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "common/clock.h"
#include "noded/job_manager.h"
#include "noded/job_status.h"
#include "noded/notify_socket.h"
#include "noded/spool.h"
#include "noded/stepd_control.h"
#include "tests/unit/noded/test_util.h"

using namespace tessera;
using namespace tessera::noded;
using tessera::noded::testing::ReadAll;
using tessera::noded::testing::ScratchDir;
using tessera::noded::testing::WaitFor;
using tessera::noded::testing::WriteAll;

namespace {

constexpr char kTestUser[] = "tessera-test";

// $TESSERA_BUILD_DIR/bin; without it, the bin/ beside this test's tests/ directory.
std::string BinDir() {
  if (const char* b = std::getenv("TESSERA_BUILD_DIR")) return std::string(b) + "/bin";
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (self.parent_path().parent_path() / "bin").string();
}

// Root plus the test user, or a reason to skip.
bool Prepared(passwd* out) {
  if (geteuid() != 0) {
    WARN("SKIPPED: stepd end-to-end tests need root (to switch to an unprivileged user)");
    return false;
  }
  // ctest runs test cases as parallel processes: the first creates the user while the others
  // wait on the lock, so none sees a user that useradd has written to /etc/passwd but not yet
  // to /etc/group (a job then failed at start, exit 1, before its script ran).
  int lock = ::open("/tmp/tessera-test-user.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  REQUIRE(lock >= 0);
  REQUIRE(::flock(lock, LOCK_EX) == 0);
  if (!getpwnam(kTestUser)) {
    int rc = std::system("useradd -r -M -s /bin/sh tessera-test >/dev/null 2>&1");
    REQUIRE(rc == 0);
  }
  ::close(lock);
  passwd* pw = getpwnam(kTestUser);
  REQUIRE(pw != nullptr);
  *out = *pw;
  REQUIRE(std::filesystem::exists(BinDir() + "/tessera-stepd"));
  return true;
}

// A spool with one job directory and a workdir owned by the test user.
struct JobSetup {
  ScratchDir root;
  Spool spool{root.path() + "/spool"};
  std::string workdir = root.path() + "/work";
  passwd user{};
  uint64_t id = 0;

  JobSetup(const passwd& u, uint64_t job_id) : user(u), id(job_id) {
    chmod(root.path().c_str(), 0755);
    REQUIRE(spool.Init().ok());
    std::filesystem::create_directory(workdir);
    REQUIRE(chown(workdir.c_str(), user.pw_uid, user.pw_gid) == 0);
  }

  tessera::v1::LaunchJob Launch(const std::string& script) const {
    tessera::v1::LaunchJob l;
    l.set_job_id(id);
    l.set_name("e2e");
    l.set_uid(user.pw_uid);
    l.set_gid(user.pw_gid);
    l.set_user(kTestUser);
    l.set_script(script);
    l.set_workdir(workdir);
    l.set_stdout_path("out-%j-%N.txt");
    l.set_time_limit_s(-1);
    l.set_kill_wait_s(1);
    l.set_partition("debug");
    l.set_nodelist("n1");
    auto* a = l.add_alloc();
    a->set_node("n1");
    a->set_cpus(2);
    a->set_tasks(1);
    a->add_gpu_indices(1);
    (*l.mutable_env())["MYVAR"] = "hello world";
    return l;
  }

  // Writes launch.pb and the script as noded does.
  void Write(const tessera::v1::LaunchJob& l) {
    REQUIRE(spool.CreateJobDir(id).ok());
    WriteAll(spool.LaunchFile(id), l.SerializeAsString());
    WriteAll(spool.ScriptFile(id), l.script());
    REQUIRE(chown(spool.ScriptFile(id).c_str(), user.pw_uid, user.pw_gid) == 0);
    REQUIRE(chmod(spool.ScriptFile(id).c_str(), 0700) == 0);
  }

  StepdArgs Args() const {
    return StepdArgs{BinDir() + "/tessera-stepd", "n1", "testcluster", spool.NotifySocket(),
                     {"GPU-zero", "GPU-one"}};
  }

  std::string Output() const { return ReadAll(workdir + "/out-" + std::to_string(id) + "-n1.txt"); }

  JobStatus WaitStatus(double seconds) const {
    std::string path = spool.StatusFile(id);
    REQUIRE(WaitFor([&] { return std::filesystem::exists(path); }, seconds));
    auto st = ReadStatusFile(path);
    REQUIRE(st.ok());
    return *st;
  }
};

}  // namespace

TEST_CASE("stepd runs a script as the submitting user with the job environment") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 101);
  auto l = job.Launch(
      "#!/bin/bash\n"
      "echo \"uid=$(id -u) gid=$(id -g)\"\n"
      "echo \"job=$SLURM_JOB_ID tjob=$TESSERA_JOB_ID name=$SLURM_JOB_NAME\"\n"
      "echo \"cuda=$CUDA_VISIBLE_DEVICES cpus=$SLURM_CPUS_ON_NODE node=$SLURMD_NODENAME\"\n"
      "echo \"myvar=$MYVAR user=$USER pwd=$(pwd)\"\n"
      "echo to-stderr >&2\n"
      "echo \"groups=$(id -G) .\"\n"
      "sh -c 'grep SigIgn /proc/$$/status'\n"
      "for i in 3 4 5 6 7 8 9 10; do [ -e /proc/$$/fd/$i ] && echo \"open fd $i\"; done\ntrue\n");
  job.Write(l);
  auto notify = BindNotifySocket(job.spool.NotifySocket());
  REQUIRE(notify.ok());
  OsStepdControl control(job.Args());
  auto old_pipe = signal(SIGPIPE, SIG_IGN);  // as noded has it; stepd must not pass it on
  Status started = control.Start(l.job_id(), job.spool.JobDir(l.job_id()));
  signal(SIGPIPE, old_pipe);
  REQUIRE(started.ok());
  CHECK(job.spool.ReadPid(l.job_id()) > 0);

  JobStatus st = job.WaitStatus(20);
  CHECK(st.state == JobState::kCompleted);
  CHECK(st.exit_code == 0);
  CHECK(ReceiveNotify(*notify, 5000) == std::vector<uint64_t>{l.job_id()});
  close(*notify);

  std::string out = job.Output();
  INFO(out);
  std::string ids = std::to_string(user.pw_uid);
  CHECK(out.find("uid=" + ids + " gid=" + std::to_string(user.pw_gid)) != std::string::npos);
  CHECK(out.find("job=101 tjob=101 name=e2e") != std::string::npos);
  CHECK(out.find("cuda=GPU-one cpus=2 node=n1") != std::string::npos);
  CHECK(out.find("myvar=hello world user=tessera-test pwd=" + job.workdir) != std::string::npos);
  CHECK(out.find("to-stderr") != std::string::npos);  // stderr "" = the stdout file
  // The user's supplementary groups, and no signal ignored (noded's SIG_IGNs are not inherited).
  std::vector<gid_t> groups(256);
  int n = static_cast<int>(groups.size());
  REQUIRE(getgrouplist(user.pw_name, user.pw_gid, groups.data(), &n) >= 0);
  std::set<std::string> want, got;
  for (int i = 0; i < n; ++i) want.insert(std::to_string(groups[static_cast<size_t>(i)]));
  std::istringstream line(out.substr(out.find("groups=") + 7));
  for (std::string g; line >> g && g != ".";) got.insert(g);
  CHECK(got == want);
  size_t at = out.find("SigIgn:\t");
  REQUIRE(at != std::string::npos);
  uint64_t ignored = std::stoull(out.substr(at + 8, 16), nullptr, 16);
  CHECK((ignored & 0x7fffffffULL) == 0);  // signals 1-31 (SIGPIPE included) at their defaults
  CHECK(out.find("open fd") == std::string::npos);  // only stdin, stdout, stderr (and bash's own)
  struct stat sb {};
  REQUIRE(stat((job.workdir + "/out-101-n1.txt").c_str(), &sb) == 0);
  CHECK(sb.st_uid == user.pw_uid);
  CHECK(sb.st_gid == user.pw_gid);
}

TEST_CASE("stepd: separate stderr file, non-zero exit is FAILED") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 102);
  auto l = job.Launch("#!/bin/sh\necho out\necho err >&2\nexit 3\n");
  l.set_stderr_path("err-%j.txt");
  job.Write(l);
  OsStepdControl control(job.Args());
  REQUIRE(control.Start(l.job_id(), job.spool.JobDir(l.job_id())).ok());
  JobStatus st = job.WaitStatus(20);
  CHECK(st.state == JobState::kFailed);
  CHECK(st.exit_code == 3);
  CHECK(job.Output() == "out\n");
  CHECK(ReadAll(job.workdir + "/err-102.txt") == "err\n");
}

TEST_CASE("stepd: an argv job is found with the job's PATH; a file without #! runs under sh") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 108);
  std::string bin = job.workdir + "/mybin";
  std::filesystem::create_directory(bin);
  WriteAll(bin + "/greet", "#!/bin/sh\necho \"greet $1|$2\"\n");
  WriteAll(bin + "/plain", "echo \"plain $0 $1\"\n");  // no #! line: ENOEXEC, then /bin/sh
  for (const char* f : {"/greet", "/plain"}) REQUIRE(chmod((bin + f).c_str(), 0755) == 0);
  for (const char* argv0 : {"greet", "plain"}) {
    auto l = job.Launch("");
    l.clear_script();
    l.add_argv(argv0);
    l.add_argv("a b");
    l.add_argv("c");
    (*l.mutable_env())["PATH"] = "mybin:/usr/bin:/bin";  // relative: from the workdir
    job.Write(l);
    OsStepdControl control(job.Args());
    REQUIRE(control.Start(l.job_id(), job.spool.JobDir(l.job_id())).ok());
    JobStatus st = job.WaitStatus(20);
    INFO(argv0 << ": " << st.message);
    CHECK(st.state == JobState::kCompleted);
    if (std::string(argv0) == "greet")
      CHECK(job.Output() == "greet a b|c\n");
    else
      CHECK(job.Output() == "plain " + bin + "/plain a b\n");
    REQUIRE(job.spool.RemoveJobDir(job.id).ok());
  }
}

TEST_CASE("stepd: time limit ends in TIMEOUT with SIGKILL after the grace period") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 103);
  auto l = job.Launch(
      "#!/bin/bash\ntrap 'echo got-term' TERM\necho started\n"
      "while true; do sleep 0.1; done\n");
  l.set_time_limit_s(1);
  l.set_kill_wait_s(1);
  job.Write(l);
  auto t0 = std::chrono::steady_clock::now();
  OsStepdControl control(job.Args());
  REQUIRE(control.Start(l.job_id(), job.spool.JobDir(l.job_id())).ok());
  JobStatus st = job.WaitStatus(20);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(st.state == JobState::kTimeout);
  CHECK(st.exit_signal == SIGKILL);  // it ignored SIGTERM
  CHECK(secs >= 1.9);
  CHECK(secs < 10);
  std::string out = job.Output();
  INFO(out);
  CHECK(out.find("got-term") != std::string::npos);
  CHECK(out.find("DUE TO TIME LIMIT") != std::string::npos);
}

TEST_CASE("stepd: suspended time does not count toward the time limit (issue 16 §4)") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 112);
  auto l = job.Launch("#!/bin/bash\necho started\nwhile true; do sleep 0.1; done\n");
  l.set_time_limit_s(3);
  l.set_kill_wait_s(1);
  job.Write(l);
  auto t0 = std::chrono::steady_clock::now();
  OsStepdControl control(job.Args());
  REQUIRE(control.Start(l.job_id(), job.spool.JobDir(l.job_id())).ok());
  REQUIRE(WaitFor([&] { return job.Output().find("started") != std::string::npos; }, 10));
  pid_t pid = job.spool.ReadPid(l.job_id());
  ::usleep(1000 * 1000);
  REQUIRE(control.Forward(l.job_id(), pid, SIGSTOP).ok());  // ctld's suspend
  ::usleep(4000 * 1000);  // longer than the whole limit
  REQUIRE(control.Forward(l.job_id(), pid, SIGCONT).ok());  // resume: ~2 s of the limit left
  ::usleep(500 * 1000);
  CHECK_FALSE(std::filesystem::exists(job.spool.StatusFile(l.job_id())));  // still running
  JobStatus st = job.WaitStatus(20);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(st.state == JobState::kTimeout);
  CHECK(secs >= 6.5);  // 3 s of limit + ~4 s suspended
  CHECK(secs < 15);
}

TEST_CASE("stepd: forwarded signals keep the job running, cancel ends it CANCELLED") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 104);
  auto l = job.Launch(
      "#!/bin/bash\ntrap 'echo got-usr1' USR1\necho started\n"
      "while true; do sleep 0.1; done\n");
  l.set_kill_wait_s(5);
  job.Write(l);
  OsStepdControl control(job.Args());
  REQUIRE(control.Start(l.job_id(), job.spool.JobDir(l.job_id())).ok());
  REQUIRE(WaitFor([&] { return job.Output().find("started") != std::string::npos; }, 10));
  pid_t pid = job.spool.ReadPid(l.job_id());
  CHECK(ProcStepdProbe().IsStepdAlive(pid, job.spool.JobDir(l.job_id())));
  // Signals naming another job (one this stepd ran before) are dropped.
  REQUIRE(control.Forward(l.job_id() + 1, pid, SIGUSR1).ok());
  REQUIRE(control.Cancel(l.job_id() + 1, pid).ok());
  std::string log = job.spool.JobDir(l.job_id()) + "/stepd.log";
  REQUIRE(WaitFor([&] { return ReadAll(log).find("signal 15 for an earlier job ignored") != std::string::npos; }, 10));
  CHECK(ReadAll(log).find("signal 10 for an earlier job ignored") != std::string::npos);
  CHECK(job.Output().find("got-usr1") == std::string::npos);
  REQUIRE(control.Forward(l.job_id(), pid, SIGUSR1).ok());
  REQUIRE(WaitFor([&] { return job.Output().find("got-usr1") != std::string::npos; }, 10));
  CHECK(!std::filesystem::exists(job.spool.StatusFile(l.job_id())));
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(control.Cancel(l.job_id(), pid).ok());
  JobStatus st = job.WaitStatus(20);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(st.state == JobState::kCancelled);
  CHECK(st.exit_signal == SIGTERM);  // bash without a TERM trap dies at once
  CHECK(secs < 4);
  CHECK(WaitFor([&] { return !ProcStepdProbe().IsStepdAlive(pid, job.spool.JobDir(l.job_id())); }, 5));
}

TEST_CASE("stepd: a missing workdir fails the job with Slurm's message in the error file") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 105);
  auto l = job.Launch("#!/bin/sh\necho never\n");
  l.set_workdir(job.root.path() + "/does-not-exist");
  l.set_stdout_path(job.workdir + "/out.txt");
  job.Write(l);
  OsStepdControl control(job.Args());
  REQUIRE(control.Start(l.job_id(), job.spool.JobDir(l.job_id())).ok());
  JobStatus st = job.WaitStatus(20);
  CHECK(st.state == JobState::kFailed);
  CHECK(st.message.find("couldn't chdir") != std::string::npos);
  CHECK(ReadAll(job.workdir + "/out.txt").find("couldn't chdir") != std::string::npos);
}

TEST_CASE("stepd: a missing workdir holding the output file is reported as the cause") {
  // Hardening issue, part 5 (-D /nonexistent): the output file inside the missing directory
  // cannot be opened either, but what failed is the directory.
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 106);
  auto l = job.Launch("#!/bin/sh\necho never\n");
  std::string dir = job.root.path() + "/does-not-exist";
  l.set_workdir(dir);
  l.set_stdout_path(dir + "/slurm-106.out");
  job.Write(l);
  OsStepdControl control(job.Args());
  REQUIRE(control.Start(l.job_id(), job.spool.JobDir(l.job_id())).ok());
  JobStatus st = job.WaitStatus(20);
  CHECK(st.state == JobState::kFailed);
  CHECK(st.message == "couldn't chdir to `" + dir + "': No such file or directory");
}

TEST_CASE("stepd: an unknown uid fails the job with a message") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 106);
  auto l = job.Launch("#!/bin/sh\necho never\n");
  l.set_uid(3999999);
  job.Write(l);
  OsStepdControl control(job.Args());
  REQUIRE(control.Start(l.job_id(), job.spool.JobDir(l.job_id())).ok());
  JobStatus st = job.WaitStatus(20);
  CHECK(st.state == JobState::kFailed);
  CHECK(st.message.find("unknown uid 3999999") != std::string::npos);
}

TEST_CASE("stepd start errors reach noded: no launch.pb") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 107);
  REQUIRE(job.spool.CreateJobDir(107).ok());
  OsStepdControl control(job.Args());
  Status st = control.Start(107, job.spool.JobDir(107));
  REQUIRE(!st.ok());
  CHECK(st.message().find("cannot read a LaunchJob") != std::string::npos);
}

TEST_CASE("noded's job manager with the real stepd: launch, finish, survive, lose") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 108);
  OsStepdControl control(job.Args());
  ProcStepdProbe probe;
  SystemClock clock;
  auto quiet = [](const std::string&) {};
  {
    JobManager jobs(job.spool, control, probe, clock, quiet);
    REQUIRE(jobs.Recover().ok());
    jobs.Launch(job.Launch("#!/bin/sh\necho quick\n"));
    REQUIRE(WaitFor([&] { jobs.Poll(); return jobs.IsFinished(108); }, 20));
    auto fin = jobs.Unacked();
    REQUIRE(fin.size() == 1);
    CHECK(fin[0].state() == tessera::v1::COMPLETED);

    // A long job whose stepd gets SIGKILLed while noded "is down".
    JobSetup* j = &job;
    j->id = 109;
    jobs.Launch(job.Launch("#!/bin/sh\necho $$ > jobpid\nexec sleep 60\n"));
    CHECK(jobs.IsRunning(109));
  }
  // "noded restarts": a new manager recovers both from the spool.
  JobManager jobs(job.spool, control, probe, clock, quiet);
  REQUIRE(jobs.Recover().ok());
  CHECK(jobs.Running() == std::vector<uint64_t>{109});
  CHECK(jobs.IsFinished(108));
  // Let the job itself start (it records its pid) before its stepd is killed.
  REQUIRE(WaitFor([&] { return !ReadAll(job.workdir + "/jobpid").empty(); }, 10));
  pid_t stepd = job.spool.ReadPid(109);
  REQUIRE(stepd > 0);
  REQUIRE(kill(stepd, SIGKILL) == 0);
  REQUIRE(WaitFor([&] { jobs.Poll(); return jobs.IsFinished(109); }, 10));
  auto fin = jobs.Unacked();
  REQUIRE(fin.size() == 2);
  CHECK(fin[1].message() == "tessera-stepd for job 109 was lost");
  jobs.Ack(108);
  jobs.Ack(109);
  CHECK(!std::filesystem::exists(job.spool.JobDir(108)));
  // the orphaned job of the lost stepd is left to cgroup cleanup (later issue); end it here
  std::string jobpid = ReadAll(job.workdir + "/jobpid");
  CHECK(kill(static_cast<pid_t>(std::stol(jobpid)), SIGKILL) == 0);
}

TEST_CASE("stepd zygote: forked daemons run jobs as the user and outlive the zygote") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 110);
  auto l = job.Launch("#!/bin/sh\necho \"zygote $(id -un)\"\nsleep 1\n");
  job.Write(l);
  pid_t first = 0;
  {
    ZygoteStepdControl control(job.Args());
    REQUIRE(control.Start(l.job_id(), job.spool.JobDir(l.job_id())).ok());
    first = job.spool.ReadPid(l.job_id());
    REQUIRE(first > 0);
    // stepd.pid records the start time; the daemon's command line is the zygote's.
    std::string pidfile = ReadAll(job.spool.PidFile(l.job_id()));
    auto start = ProcessStartTime(first);
    REQUIRE(start.ok());
    CHECK(pidfile == std::to_string(first) + " " + std::to_string(*start) + "\n");
    std::string cmdline = ReadAll("/proc/" + std::to_string(first) + "/cmdline");
    CHECK(cmdline.find("--zygote") != std::string::npos);
    CHECK(ProcStepdProbe().IsStepdAlive(first, job.spool.JobDir(l.job_id())));
    // A second job through the same zygote, and a bad job directory: an error, no daemon.
    JobSetup other(user, 111);
    auto bad = control.Start(111, other.spool.JobDir(111));
    CHECK(!bad.ok());
    CHECK(bad.message().find("cannot read a LaunchJob") != std::string::npos);
  }  // the zygote exits with its control; the running daemon does not
  CHECK(ProcStepdProbe().IsStepdAlive(first, job.spool.JobDir(l.job_id())));
  JobStatus st = job.WaitStatus(20);
  CHECK(st.state == JobState::kCompleted);
  CHECK(job.Output() == "zygote tessera-test\n");
  std::string dir = job.spool.JobDir(l.job_id());
  CHECK(WaitFor([&] { return !ProcStepdProbe().IsStepdAlive(first, dir); }, 5));
}

// Whether `pid` is blocked receiving from a socket (a zygote-forked stepd waiting for a job).
bool WaitingForJob(pid_t pid) {
  std::string call = ReadAll("/proc/" + std::to_string(pid) + "/syscall");
  long nr = call.empty() ? -1 : std::strtol(call.c_str(), nullptr, 10);
  return nr == SYS_recvfrom || nr == SYS_recvmsg;
}

TEST_CASE("stepd zygote: an idle stepd runs the next job and drops its previous job's signals") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 120);
  ZygoteStepdControl control(job.Args());
  auto run = [&](uint64_t id, const std::string& script) {
    job.id = id;
    job.Write(job.Launch(script));
    REQUIRE(control.Start(id, job.spool.JobDir(id)).ok());
    return job.spool.ReadPid(id);
  };
  pid_t first = run(120, "#!/bin/sh\necho first\n");
  REQUIRE(first > 0);
  CHECK(job.WaitStatus(20).state == JobState::kCompleted);
  REQUIRE(WaitFor([&] { return WaitingForJob(first); }, 10));
  // A cancel and a forward that reach the stepd after job 120 ended, while it waits.
  REQUIRE(control.Cancel(120, first).ok());
  REQUIRE(control.Forward(120, first, SIGUSR1).ok());

  pid_t second = run(121, "#!/bin/sh\nsleep 0.3\necho second $(id -un)\n");
  CHECK(second == first);  // the same process, not a new fork
  auto start = ProcessStartTime(first);
  REQUIRE(start.ok());
  CHECK(ReadAll(job.spool.PidFile(121)) == std::to_string(first) + " " + std::to_string(*start) + "\n");
  JobStatus st = job.WaitStatus(20);
  CHECK(st.state == JobState::kCompleted);
  CHECK(job.Output() == "second tessera-test\n");

  // Cancel still reaches the job the stepd runs now.
  REQUIRE(WaitFor([&] { return WaitingForJob(first); }, 10));
  pid_t third = run(122, "#!/bin/sh\necho started\nexec sleep 60\n");
  CHECK(third == first);
  REQUIRE(WaitFor([&] { return job.Output() == "started\n"; }, 10));
  REQUIRE(control.Cancel(122, third).ok());
  CHECK(job.WaitStatus(20).state == JobState::kCancelled);
  // Two jobs at once need two stepds.
  REQUIRE(WaitFor([&] { return WaitingForJob(first); }, 10));
  pid_t a = run(123, "#!/bin/sh\nsleep 1\n");
  pid_t b = run(124, "#!/bin/sh\nsleep 1\n");
  CHECK(a == first);
  CHECK(b != first);
  CHECK(job.WaitStatus(20).state == JobState::kCompleted);
  job.id = 123;
  CHECK(job.WaitStatus(20).state == JobState::kCompleted);
}

TEST_CASE("noded with reused stepds: a cancel of an ended job never reaches the next job") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 200);
  ZygoteStepdControl control(job.Args());
  ProcStepdProbe probe;
  SystemClock clock;
  JobManager jobs(job.spool, control, probe, clock, [](const std::string&) {});
  REQUIRE(jobs.Recover().ok());
  auto ended = [&](uint64_t id) { return ReadStatusFile(job.spool.StatusFile(id)).ok(); };
  std::map<uint64_t, pid_t> stepd;
  // Even jobs end at once, odd ones run until cancelled. Each even job that has ended is
  // cancelled again and again (as `tcancel` racing with its end would), before noded has
  // noticed the end, while its stepd may already run a later job.
  for (uint64_t id = 200; id < 224; ++id) {
    job.id = id;
    jobs.Launch(job.Launch(id % 2 ? "#!/bin/sh\necho started\nexec sleep 60\n" : "#!/bin/sh\necho ok\n"));
    REQUIRE(jobs.IsRunning(id));
    stepd[id] = job.spool.ReadPid(id);
    for (uint64_t done = 200; done < id; done += 2)
      if (ended(done)) jobs.Signal(done, 0);
  }
  std::set<pid_t> distinct;
  for (const auto& [id, pid] : stepd) distinct.insert(pid);
  CHECK(distinct.size() < stepd.size());  // some stepds ran more than one job
  for (uint64_t id = 201; id < 224; id += 2) {
    job.id = id;
    REQUIRE(WaitFor([&] { return job.Output() == "started\n"; }, 10));
    jobs.Signal(id, 0);
  }
  for (uint64_t id = 200; id < 224; ++id) {
    INFO("job " << id);
    REQUIRE(WaitFor([&] { return ended(id); }, 20));
    CHECK(ReadStatusFile(job.spool.StatusFile(id))->state ==
          (id % 2 ? JobState::kCancelled : JobState::kCompleted));
  }
}

TEST_CASE("stepd zygote: idle stepds exit with the zygote") {
  passwd user{};
  if (!Prepared(&user)) return;
  JobSetup job(user, 130);
  job.Write(job.Launch("#!/bin/sh\necho done\n"));
  pid_t pid = 0;
  {
    ZygoteStepdControl control(job.Args());
    REQUIRE(control.Start(130, job.spool.JobDir(130)).ok());
    pid = job.spool.ReadPid(130);
    CHECK(job.WaitStatus(20).state == JobState::kCompleted);
    REQUIRE(WaitFor([&] { return WaitingForJob(pid); }, 10));
  }
  CHECK(WaitFor([&] { return !ProcessStartTime(pid).ok(); }, 10));
}

TEST_CASE("stepd probe: a recorded start time must match") {
  ScratchDir d;
  pid_t self = getpid();
  auto start = ProcessStartTime(self);
  REQUIRE(start.ok());
  WriteAll(d.path() + "/stepd.pid", std::to_string(self) + " " + std::to_string(*start + 1) + "\n");
  CHECK(!ProcStepdProbe().IsStepdAlive(self, d.path()));
  WriteAll(d.path() + "/stepd.pid", std::to_string(self) + " " + std::to_string(*start) + "\n");
  CHECK(ProcStepdProbe().IsStepdAlive(self, d.path()));
  CHECK(!ProcessStartTime(0x7ffffff0).ok());
}
