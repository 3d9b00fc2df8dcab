#include "noded/job_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "common/filename_pattern.h"
#include "noded/batch_cgroups.h"
#include "noded/stepd_signal.h"
#include "noded/task_usage.h"


namespace tessera::noded {
namespace {

struct ChildPlan {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups (getgrouplist), when switching users
  bool switch_user = false;
  std::string out_path, err_path;
  bool err_same = true;
  std::string workdir;
  std::vector<std::string> env;
  std::vector<std::string> argv;  // argv[0] = program (script path or command)
  std::string exec_path;          // argv[0] found with the job's PATH

  std::vector<std::string> join_files;  // cgroup.procs files to write "0" to
  std::string cgroup_name;
};

std::vector<char*> CArray(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The C views of a ChildPlan, made before the fork: the vfork'ed child shares stepd's memory
// and runs system calls only (no allocation, no locks, no stdio).
struct ChildExec {
  ChildPlan& p;
  std::vector<char*> argv, envp, sh_argv;  // sh_argv: /bin/sh <program> <arguments> (ENOEXEC)
  std::string sh = "/bin/sh";
  explicit ChildExec(ChildPlan& plan) : p(plan), argv(CArray(plan.argv)), envp(CArray(plan.env)) {
    sh_argv = {sh.data(), plan.exec_path.data()};
    sh_argv.insert(sh_argv.end(), argv.begin() + 1, argv.end());  // arguments and the nullptr
  }
};

// argv[0] as execvp would find it, but with the job's PATH (relative entries from the job's
// workdir): the vfork'ed child must not search itself (execvp reads stepd's environ). Unchanged
// when it has a slash or is not found (the exec then fails as execvp would).
std::string ResolveProgram(const std::string& name, const std::vector<std::string>& env,
                           const std::string& workdir) {
  if (name.empty() || name.find('/') != std::string::npos) return name;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& kv : env)
    if (kv.rfind("PATH=", 0) == 0) path = kv.substr(5);
  for (size_t start = 0; start <= path.size();) {
    size_t end = std::min(path.find(':', start), path.size());
    std::string dir = path.substr(start, end - start);
    if (dir.empty() || dir[0] != '/') dir = workdir + (dir.empty() ? "" : "/" + dir);
    std::string candidate = dir + "/" + name;
    struct stat st{};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
      return candidate;
    start = end + 1;
  }
  return name;
}

void Put(int fd, const char* s) {
  ssize_t n = ::write(fd, s, std::strlen(s));
  (void)n;
}

const char* Why(int err) {
  const char* d = strerrordesc_np(err);
  return d ? d : "unknown error";
}

// dup2(fd, to) and close fd, so the job gets no second descriptor of it.
void MoveFd(int fd, int to) {
  if (fd == to) return;
  ::dup2(fd, to);
  ::close(fd);
}

// "<what><arg>: <strerror(err)>" to errfd (stepd's setup error pipe) and, when also_stderr, as a
// "tessera-stepd: error: ..." line to the job's stderr; then _exit(code).
[[noreturn]] void ChildFail(int errfd, const char* what, const char* arg, int err, int code,
                            bool also_stderr = false) {
  if (also_stderr) {
    for (const char* part : {"tessera-stepd: error: ", what, arg, ": ", Why(err), "\n"})
      Put(2, part);
  }
  for (const char* part : {what, arg, ": ", Why(err)}) Put(errfd, part);
  ::_exit(code);
}

// "couldn't chdir to `DIR': <strerror(err)>" (Slurm's words) to errfd and, when also_stderr, to
// the job's stderr; then _exit(1).
[[noreturn]] void ChdirFail(int errfd, const char* dir, int err, bool also_stderr) {
  if (also_stderr) {
    Put(2, "tessera-stepd: error: ");
    for (const char* part : {"couldn't chdir to `", dir, "': ", Why(err), "\n"}) Put(2, part);
  }
  for (const char* part : {"couldn't chdir to `", dir, "': ", Why(err)}) Put(errfd, part);
  ::_exit(1);
}

// Runs in the vfork'ed child until exec: system calls on prepared data only. Signal dispositions
// are already the defaults (BlockJobSignals); only the mask is cleared.
[[noreturn]] void RunChild(ChildExec& c, int errfd) {
  ChildPlan& p = c.p;
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::setsid();
  for (const std::string& f : p.join_files) {
    int fd = ::open(f.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0", 1) != 1)
      ChildFail(errfd, "cannot join the job's cgroup: ", f.c_str(), errno, 1);
    ::close(fd);
  }
  // Raw system calls: they change this process only, as they must in a vfork'ed child.
  if (p.switch_user) {
    if (::syscall(SYS_setgroups, p.groups.size(), p.groups.data()) != 0)
      ChildFail(errfd, "setgroups", "", errno, 1);
    if (::syscall(SYS_setresgid, p.gid, p.gid, p.gid) != 0) ChildFail(errfd, "setgid", "", errno, 1);
    if (::syscall(SYS_setresuid, p.uid, p.uid, p.uid) != 0) ChildFail(errfd, "setuid", "", errno, 1);
  }
  ::umask(022);
  int in = ::open("/dev/null", O_RDONLY);
  if (in >= 0) MoveFd(in, 0);
  // The working directory first: when it is missing, that is the cause to report, even though
  // the output file (by default inside it) cannot be opened either. Output paths are absolute.
  int cd_err = ::chdir(p.workdir.c_str()) == 0 ? 0 : errno;
  int out = ::open(p.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0 && cd_err) ChdirFail(errfd, p.workdir.c_str(), cd_err, false);
  if (out < 0) ChildFail(errfd, "cannot open output file ", p.out_path.c_str(), errno, 1);
  MoveFd(out, 1);
  if (p.err_same) {
    ::dup2(1, 2);
  } else {
    int err = ::open(p.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err < 0 && cd_err) ChdirFail(errfd, p.workdir.c_str(), cd_err, false);
    if (err < 0) ChildFail(errfd, "cannot open error file ", p.err_path.c_str(), errno, 1);
    MoveFd(err, 2);
  }
  if (cd_err) ChdirFail(errfd, p.workdir.c_str(), cd_err, true);
  ::execve(p.exec_path.c_str(), c.argv.data(), c.envp.data());
  if (errno == ENOEXEC) ::execve(c.sh_argv[0], c.sh_argv.data(), c.envp.data());  // no #! line
  int e = errno;
  ChildFail(errfd, "cannot execute ", c.argv[0], e, e == ENOENT ? 127 : 126, true);
}

int64_t MonoMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

std::string IsoNow() {
  time_t t = time(nullptr);
  tm lt{};
  localtime_r(&t, &lt);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &lt);
  return buf;
}

// Slurm-style banner in the job's error file. stepd may be root: it appends only to a regular
// file (no symlink) owned by the job's user, so a user cannot aim it at someone else's file.
void Banner(const std::string& path, uid_t owner, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != owner) {
    ::close(fd);
    return;
  }
  std::string line = "tessera-stepd: error: *** " + text + " ***\n";
  ssize_t n = ::write(fd, line.data(), line.size());
  (void)n;
  ::close(fd);
}

void Say(const JobRunOptions& o, const std::string& m) {
  if (o.log) o.log(m);
}

struct Supervision {
  pid_t pid;
  int sfd;
  const tessera::v1::LaunchJob& launch;
  const JobRunOptions& opts;
  std::string err_path;
  CgroupManager* cgroup;
  std::string cgroup_name;
  // Issue 19 (h19): the batch script's accounting cgroup ("" = none) and its usage.
  const TaskUsageCgroups* usage = nullptr;
  std::string acct;
  TaskUsage* batch_usage = nullptr;
};

// Every process of the job's cgroup (none without one).
void SignalCgroup(const Supervision& s, int sig) {
  if (!s.cgroup) return;
  auto procs = s.cgroup->Procs(s.cgroup_name);
  if (procs.ok())
    for (pid_t p : *procs) ::kill(p, sig);
}

void KillCgroup(const Supervision& s) {
  if (!s.cgroup) return;
  Status st = s.cgroup->KillAll(s.cgroup_name);
  if (!st.ok()) Say(s.opts, "warning: " + st.message());
}

// Suspend/resume (SIGSTOP/SIGCONT from ctld) through the job cgroup's freezer: the whole
// cgroup, setsid escapees too. False when there is no cgroup or no freezer (then the signal
// goes to the process group).
bool FreezeCgroup(const Supervision& s, bool frozen) {
  if (!s.cgroup) return false;
  Status st = s.cgroup->Freeze(s.cgroup_name, frozen);
  if (!st.ok()) {
    if (st.code() != Code::kUnimplemented) Say(s.opts, "warning: freezer: " + st.message());
    return false;
  }
  Say(s.opts, std::string(frozen ? "froze" : "thawed") + " the job's cgroup");
  return true;
}

JobStatus Supervise(const Supervision& s) {
  const auto& l = s.launch;
  int64_t start = MonoMs();
  int64_t deadline = l.time_limit_s() > 0 ? start + l.time_limit_s() * 1000 : -1;
  int64_t grace_ms = std::max<int64_t>(0, l.kill_wait_s()) * 1000;
  int64_t kill_at = -1;
  // Suspended (SIGSTOP from ctld) since this time, -1 = not: as in Slurm, suspended time does
  // not count toward the time limit; the deadline moves by it on resume (issue 16 §4).
  int64_t suspended_at = -1;
  JobState ending = JobState::kUnspecified;
  std::string job = "JOB " + std::to_string(l.job_id()) + " ON " + s.opts.node.node_name;
  auto escalate = [&](JobState why, const std::string& banner) {
    if (ending != JobState::kUnspecified) return;
    ending = why;
    Banner(s.err_path, s.launch.uid(), banner);
    Say(s.opts, banner + ": SIGTERM to the job, SIGKILL in " + std::to_string(grace_ms) + " ms");
    ::kill(-s.pid, SIGTERM);
    SignalCgroup(s, SIGTERM);
    kill_at = MonoMs() + grace_ms;
  };
  int wstatus = 0;
  bool exited = false;
  int64_t next_sample = -1;  // issue 19: when the next usage sample is due (-1: the first)
  while (!exited) {
    int64_t now = MonoMs();
    if (deadline >= 0 && suspended_at < 0 && now >= deadline)
      escalate(JobState::kTimeout, job + " CANCELLED AT " + IsoNow() + " DUE TO TIME LIMIT");
    if (kill_at >= 0 && now >= kill_at) {
      Say(s.opts, "grace period over: SIGKILL to the job");
      ::kill(-s.pid, SIGKILL);
      KillCgroup(s);
      kill_at = -1;
    }
    int64_t next = kill_at;
    if (ending == JobState::kUnspecified && deadline >= 0 && suspended_at < 0) next = deadline;
    int timeout = next < 0 ? -1 : static_cast<int>(std::max<int64_t>(0, next - now));
    if (s.usage && !s.acct.empty()) {  // issue 19: sample VmSize/RSS once a second
      // Session 8: the first sample, at the start, reads the script's process only (the
      // cgroup's process list is a pid list the v1 kernel builds and frees for every read).
      if (next_sample < 0)
        s.usage->SamplePids({s.pid}, s.batch_usage);
      else if (now >= next_sample)
        s.usage->Sample(s.acct, s.batch_usage);
      if (next_sample < 0 || now >= next_sample) next_sample = now + 1000;
      int64_t wait = std::max<int64_t>(0, next_sample - now);
      timeout = timeout < 0 ? static_cast<int>(wait) : std::min<int>(timeout, static_cast<int>(wait));
    }
    pollfd p{s.sfd, POLLIN, 0};
    ::poll(&p, 1, timeout);
    signalfd_siginfo si{};
    while (::read(s.sfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
      if (si.ssi_signo == SIGCHLD) {
        int st = 0;
        struct rusage ru {};
        if (s.batch_usage) FoldEndedIo(s.pid, s.batch_usage);  // disk figures (h19 s6)
        for (pid_t r; (r = ::wait4(-1, &st, WNOHANG, &ru)) > 0;)
          if (r == s.pid) {
            wstatus = st, exited = true;
            if (s.batch_usage) FromRusage(ru, s.batch_usage);  // the cgroup's figures win
          }
        continue;
      }
      int sig = 0;
      if (!StepdSignalFor(si.ssi_code, si.ssi_ptr, l.job_id(), &sig)) {
        Say(s.opts, "signal " + std::to_string(si.ssi_signo) + " for an earlier job ignored");
      } else if (si.ssi_signo == SIGTERM) {
        escalate(JobState::kCancelled, job + " CANCELLED AT " + IsoNow());
      } else if (si.ssi_signo == SIGUSR1) {
        if (sig == SIGSTOP && suspended_at < 0) suspended_at = MonoMs();
        if (sig == SIGCONT && suspended_at >= 0) {
          if (deadline >= 0) deadline += MonoMs() - suspended_at;
          suspended_at = -1;
        }
        if ((sig == SIGSTOP || sig == SIGCONT) && FreezeCgroup(s, sig == SIGSTOP)) {
          // suspended / resumed with the cgroup freezer (issue 16 §4)
        } else if (sig > 0 && sig < NSIG) {
          Say(s.opts, "forwarding signal " + std::to_string(sig) + " to the job");
          ::kill(-s.pid, sig);
        }
      }
    }
  }
  ::kill(-s.pid, SIGKILL);  // whatever the script left behind in its process group
  KillCgroup(s);            // and anything that left the group (setsid)
  JobStatus r;
  r.end_time = time(nullptr);
  if (WIFEXITED(wstatus)) r.exit_code = WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) r.exit_signal = WTERMSIG(wstatus);
  if (ending != JobState::kUnspecified)
    r.state = ending;
  else
    r.state = (WIFEXITED(wstatus) && r.exit_code == 0) ? JobState::kCompleted : JobState::kFailed;
  if (r.state == JobState::kTimeout)
    r.message = "time limit of " + std::to_string(l.time_limit_s()) + " s reached";
  if (s.cgroup && r.state != JobState::kTimeout && r.state != JobState::kCancelled) {
    auto oom = s.cgroup->OomKilled(s.cgroup_name);
    if (oom.ok() && *oom) {
      r.state = JobState::kOutOfMemory;
      r.message = "a process of the job was killed by the out-of-memory killer (memory limit " +
                  std::to_string(s.opts.isolation->cgroup.memory_bytes >> 20) + " MiB)";
      Banner(s.err_path, s.launch.uid(), "JOB " + std::to_string(l.job_id()) + " ON " +
                                             s.opts.node.node_name + " OUT OF MEMORY");
    }
  }
  return r;
}

JobStatus Failed(const std::string& message, int code = 1) {
  JobStatus st;
  st.state = JobState::kFailed;
  st.exit_code = code;
  st.end_time = time(nullptr);
  st.message = message;
  return st;
}

}  // namespace

static JobStatus RunAndSupervise(const tessera::v1::LaunchJob& l, const JobRunOptions& opts,
                                 ChildPlan& plan, CgroupManager* cgroup,
                                 const TaskUsageCgroups* usage, const std::string& acct,
                                 TaskUsage* batch_usage);

void BlockJobSignals() {
  // Default dispositions for everything (what noded ignored, e.g. SIGPIPE, would otherwise be
  // inherited by every job); stepd itself handles signals through a signalfd.
  for (int s = 1; s < NSIG; ++s)
    if (s != SIGKILL && s != SIGSTOP) ::signal(s, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGCHLD, SIGTERM, SIGUSR1, SIGINT, SIGHUP, SIGPIPE}) sigaddset(&set, s);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
}

JobStatus RunJob(const tessera::v1::LaunchJob& l, const JobRunOptions& opts) {
  const bool root = ::getuid() == 0;
  if (!root && l.uid() != ::getuid())
    return Failed("tessera-stepd runs as uid " + std::to_string(::getuid()) +
                  " and cannot switch to uid " + std::to_string(l.uid()));
  Result<JobUser> looked_up = opts.user ? Result<JobUser>(*opts.user)
                                        : LookUpJobUser(l.uid(), l.gid(), root);
  if (!looked_up.ok())
    return Failed("unknown uid " + std::to_string(l.uid()) + " (user '" + l.user() +
                  "') on node " + opts.node.node_name);
  const UserInfo& user = looked_up->info;
  if (l.script().empty() && l.argv_size() == 0) return Failed("job has neither a script nor argv");
  ChildPlan plan;
  plan.uid = l.uid();
  plan.gid = l.gid();
  plan.switch_user = root;
  plan.groups = std::move(looked_up->groups);
  plan.workdir = l.workdir().empty() ? user.home : l.workdir();
  FilenameVars vars{l.job_id(), l.name(), user.name, 0, -1, opts.node.node_name};
  vars.restart_count = l.restart_count();  // %r (issue 19); %J %s %n %t: the batch step
  plan.out_path = ExpandFilenamePattern(l.stdout_path(), vars, plan.workdir);
  plan.err_same = l.stderr_path().empty();
  plan.err_path = plan.err_same ? plan.out_path
                                : ExpandFilenamePattern(l.stderr_path(), vars, plan.workdir);
  std::string env_error;
  NodeFacts facts = opts.node;
  if (opts.isolation) {
    facts.hcas = opts.isolation->hcas;
    facts.netdevs = opts.isolation->netdevs;
  }
  plan.env = EnvToStrings(BuildJobEnv(l, facts, user, &env_error));
  if (!env_error.empty()) Say(opts, "warning: " + env_error);
  if (!l.script().empty()) {
    // argv[0] is the submitted script's path (shown as Command); argv[1..] are its arguments.
    plan.argv = {opts.script_path};
    for (int i = 1; i < l.argv_size(); ++i) plan.argv.push_back(l.argv(i));
  } else
    plan.argv.assign(l.argv().begin(), l.argv().end());
  plan.exec_path = ResolveProgram(plan.argv[0], plan.env, plan.workdir);

  BatchCgroups cgroups;  // the job's cgroup + the .batch step's accounting one (issue 19)
  TaskUsage batch_usage;
  if (opts.isolation && !opts.isolation->cgroup_root.empty()) {
    const JobIsolation& iso = *opts.isolation;
    std::vector<std::string> warnings;
    Status st = cgroups.Setup(iso, &warnings);
    for (const auto& w : warnings) Say(opts, "warning: " + w);
    if (!st.ok()) return Failed("cannot set up the job's cgroup: " + st.message());
    plan.join_files = cgroups.JoinFiles();
    plan.cgroup_name = iso.cgroup.name;
    Say(opts, std::string("cgroup ") + CgroupModeName(cgroups.manager()->mode()) + " " +
                  iso.cgroup.name + ": cpus " + iso.cgroup.cpus + ", memory " +
                  std::to_string(iso.cgroup.memory_bytes) + " bytes");
  }
  JobStatus st = RunAndSupervise(l, opts, plan, cgroups.manager(), cgroups.usage(),
                                 cgroups.acct(), &batch_usage);
  if (cgroups.usage()) cgroups.usage()->Read(cgroups.acct(), &batch_usage);
  st.usage = FormatUsageText(batch_usage);
  if (Status rm = cgroups.Teardown(); !rm.ok()) Say(opts, "warning: " + rm.message());
  return st;
}

// The job's process is started with vfork (no copy of stepd's page tables, no copy-on-write
// faults before the exec): RunChild runs on data prepared here.
static JobStatus RunAndSupervise(const tessera::v1::LaunchJob& l, const JobRunOptions& opts,
                                 ChildPlan& plan, CgroupManager* cgroup,
                                 const TaskUsageCgroups* usage, const std::string& acct,
                                 TaskUsage* batch_usage) {
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : {SIGCHLD, SIGTERM, SIGUSR1}) sigaddset(&mask, s);
  int sfd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  int errpipe[2];
  if (sfd < 0 || ::pipe2(errpipe, O_CLOEXEC) != 0)
    return Failed(std::string("stepd setup: ") + std::strerror(errno));
  ChildExec exec(plan);
  pid_t pid = ::vfork();
  if (pid == 0) RunChild(exec, errpipe[1]);
  if (pid < 0) return Failed(std::string("vfork: ") + std::strerror(errno));
  ::close(errpipe[1]);
  std::string setup_error;
  char chunk[512];
  for (ssize_t n; (n = ::read(errpipe[0], chunk, sizeof chunk)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    setup_error.append(chunk, static_cast<size_t>(n));
  }
  ::close(errpipe[0]);
  if (!setup_error.empty()) {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    ::close(sfd);
    return Failed(setup_error, WIFEXITED(st) ? WEXITSTATUS(st) : 1);
  }
  Say(opts, "job " + std::to_string(l.job_id()) + " started as pid " + std::to_string(pid) +
                " (uid " + std::to_string(l.uid()) + "), output " + plan.out_path);
  JobStatus st = Supervise(
      {pid, sfd, l, opts, plan.err_path, cgroup, plan.cgroup_name, usage, acct, batch_usage});
  ::close(sfd);
  return st;
}

}  // namespace tessera::noded
