#include "noded/task_set.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace tessera::noded {

namespace v1 = tessera::v1;

namespace {

constexpr int64_t kPipeGraceMs = 2000;
constexpr size_t kChunk = 64 * 1024;

int64_t MonoMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

std::vector<char*> CArray(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// A short answer on a blocking socket; a task that went away loses it.
void WriteAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

void WriteStr(int fd, const char* s) {
  ssize_t n = ::write(fd, s, std::strlen(s));
  (void)n;
}

// Everything the child needs, prepared before fork (no allocation after it).
struct ChildArgs {
  const TaskPlan* plan;
  bool switch_user;
  int devnull, out, err, gate, gate_w;
  char** argv;
  char** envp;
  const char* input = nullptr;  // trun -i: opened after the switch to the user
  int stdin_r = -1;             // -i all|N: the read end of its stdin pipe
  int pty_slave = -1;           // --pty: the terminal's slave side (stdin, stdout, stderr)
  int pmi = -1;                 // --mpi=pmi2: the task's end of its PMI socket (becomes fd 3)
};

// Closes every descriptor from 3 up except `x` and `y` (-1: none). Async-signal-safe.
void CloseAllBut(int x, int y) {
  int lo = std::min(x, y), hi = std::max(x, y);
  if (lo < 3) lo = hi, hi = -1;  // at most one to keep
  unsigned from = 3;
  for (int keep : {lo, hi}) {
    if (keep < 3) continue;
    if (static_cast<unsigned>(keep) > from) ::close_range(from, static_cast<unsigned>(keep) - 1, 0);
    from = static_cast<unsigned>(keep) + 1;
  }
  ::close_range(from, ~0U, 0);
}

// Runs in the forked child of a multi-threaded process: async-signal-safe calls only.
[[noreturn]] void ExecTask(const ChildArgs& a) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int s = 1; s < NSIG; ++s)
    if (s != SIGKILL && s != SIGSTOP) ::signal(s, SIG_DFL);
  if (a.pty_slave >= 0) {  // --pty: a session of its own with the pty as controlling terminal
    ::setsid();
    ::ioctl(a.pty_slave, TIOCSCTTY, 0);
    for (int fd = 0; fd < 3; ++fd) ::dup2(a.pty_slave, fd);
  } else {
    ::setpgid(0, 0);
    ::dup2(a.stdin_r >= 0 ? a.stdin_r : a.devnull, 0);
    ::dup2(a.out, 1);
    ::dup2(a.err, 2);
  }
  // Every inherited descriptor but the gate and the PMI socket goes now, before the gate wait:
  // tasks forked at the same moment by other threads (other steps) hold each other's gate write
  // ends until they exec, and two of them waiting on their gates would wait for ever (h19 s6:
  // steps stuck RUNNING under load; found by the corpus run).
  CloseAllBut(a.gate, a.pmi);
  if (a.gate >= 0) {  // wait until noded moved us into the job's cgroup (it closes gate_w)
    char c;
    while (::read(a.gate, &c, 1) < 0 && errno == EINTR) {
    }
  }
  const TaskPlan& p = *a.plan;
  if (a.switch_user) {
    if (::setgroups(p.groups.size(), p.groups.data()) != 0 || ::setgid(p.gid) != 0 ||
        ::setuid(p.uid) != 0) {
      WriteStr(2, "tessera-noded: error: cannot switch to the step's user: ");
      WriteStr(2, strerrordesc_np(errno));
      WriteStr(2, "\n");
      ::_exit(1);
    }
  }
  ::umask(022);
  if (!p.cwd.empty() && ::chdir(p.cwd.c_str()) != 0) {
    WriteStr(2, "tessera-noded: error: couldn't chdir to `");
    WriteStr(2, p.cwd.c_str());
    WriteStr(2, "': ");
    WriteStr(2, strerrordesc_np(errno));
    WriteStr(2, ": going to /tmp instead\n");
    if (::chdir("/tmp") != 0) ::_exit(1);
  }
  if (a.input) {  // trun -i FILE: the task's stdin, opened with the user's permissions
    int fd = ::open(a.input, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      WriteStr(2, "tessera-noded: error: cannot open input file ");
      WriteStr(2, a.input);
      WriteStr(2, ": ");
      WriteStr(2, strerrordesc_np(errno));
      WriteStr(2, "\n");
      ::_exit(1);
    }
    ::dup2(fd, 0);
  }
  if (a.pmi >= 0) {  // PMI_FD=3
    if (a.pmi == 3) ::fcntl(3, F_SETFD, 0);
    else ::dup2(a.pmi, 3);
    ::close_range(4, ~0U, 0);
  } else {
    ::close_range(3, ~0U, 0);
  }
  environ = a.envp;
  ::execvp(a.argv[0], a.argv);
  int e = errno;
  WriteStr(2, "tessera-noded: error: execve(): ");
  WriteStr(2, a.argv[0]);
  WriteStr(2, ": ");
  WriteStr(2, strerrordesc_np(e));
  WriteStr(2, "\n");
  ::_exit(e == ENOENT ? 127 : 126);
}

}  // namespace

Result<std::vector<gid_t>> UserGroups(const std::string& user, gid_t gid) {
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  while (::getgrouplist(user.c_str(), gid, groups.data(), &n) < 0) {
    if (n > 65536) return Internal("getgrouplist(" + user + "): too many groups");
    groups.resize(static_cast<size_t>(n) * 2);
    n = static_cast<int>(groups.size());
  }
  groups.resize(static_cast<size_t>(n));
  return groups;
}

TaskSet::TaskSet(TaskPlan plan, LogFn log) : plan_(std::move(plan)), log_(std::move(log)) {
  if (plan_.pmi) pmi_ = std::make_unique<Pmi2Server>(*plan_.pmi);
}

TaskSet::~TaskSet() {
  if (pty_in_ >= 0) ::close(pty_in_);
  KillAll(SIGKILL);
  for (auto& p : procs_) {
    if (p.pid > 0 && !p.reaped)
      while (::waitpid(p.pid, &p.status, 0) < 0 && errno == EINTR) {
      }
    if (p.out >= 0) ::close(p.out);
    if (p.err >= 0) ::close(p.err);
    if (p.pmi >= 0) ::close(p.pmi);
  }
}

Status TaskSet::Start() {
  if (::geteuid() != 0 && plan_.uid != ::geteuid())
    return PermissionDenied("tessera-noded runs as uid " + std::to_string(::geteuid()) +
                            " and cannot start tasks as uid " + std::to_string(plan_.uid));
  if (plan_.argv.empty()) return InvalidArgument("no command to run (argv is empty)");
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0) return Internal(std::string("open /dev/null: ") + std::strerror(errno));
  procs_.resize(plan_.tasks.size());
  Status st;
  for (size_t i = 0; i < plan_.tasks.size() && st.ok(); ++i) st = StartOne(i, devnull);
  ::close(devnull);
  if (!st.ok()) {
    KillAll(SIGKILL);
    for (auto& p : procs_)
      if (p.pid > 0 && !p.reaped && ::waitpid(p.pid, &p.status, 0) == p.pid) p.reaped = true;
  }
  return st;
}

namespace {
// A pseudo-terminal pair (issue 19, --pty): the master non-blocking, the slave owned by the
// step's user; both close-on-exec (the child dup2s the slave).
Status OpenPty(const TaskPlan& plan, int* master, int* slave) {
  *master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (*master < 0) return Internal(std::string("posix_openpt: ") + std::strerror(errno));
  char name[64];
  if (::grantpt(*master) != 0 || ::unlockpt(*master) != 0 ||
      ::ptsname_r(*master, name, sizeof name) != 0 ||
      (*slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
    int e = errno;
    ::close(*master);
    return Internal(std::string("cannot open a pseudo-terminal: ") + std::strerror(e));
  }
  // The user's terminal, as login makes it; the task works without (it then stays root's).
  if (::geteuid() == 0) (void)!::fchown(*slave, plan.uid, plan.gid);
  if (plan.pty_rows > 0 && plan.pty_cols > 0) {
    winsize ws{};
    ws.ws_row = plan.pty_rows;
    ws.ws_col = plan.pty_cols;
    ::ioctl(*master, TIOCSWINSZ, &ws);
  }
  ::fcntl(*master, F_SETFL, O_NONBLOCK);
  return Status::Ok();
}
}  // namespace

Status TaskSet::StartOne(size_t i, int devnull) {
  Proc& p = procs_[i];
  p.rank = plan_.tasks[i].rank;
  bool on_pty = plan_.pty && p.rank == 0;
  // out/err: pipes (read end [0], the child's [1]); on a pty out[0] is the master, out[1] the
  // slave and there is no separate stderr.
  int out[2], err[2] = {-1, -1}, gate[2] = {-1, -1};
  if (on_pty) {
    if (Status st = OpenPty(plan_, &out[0], &out[1]); !st.ok()) return st;
  } else if (::pipe2(out, O_CLOEXEC) != 0) {
    return Internal(std::string("pipe: ") + std::strerror(errno));
  }
  if (!on_pty && ::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]), ::close(out[1]);
    return Internal(std::string("pipe: ") + std::strerror(errno));
  }
  if (plan_.cgroup && ::pipe2(gate, O_CLOEXEC) != 0) gate[0] = gate[1] = -1;
  int in[2] = {-1, -1};  // -i all|N: [0] the task's stdin, [1] ours (issue 19, h19 s7)
  if (plan_.tasks[i].forward_stdin && !on_pty && ::pipe2(in, O_CLOEXEC) != 0) {
    int e = errno;
    for (int fd : {out[0], out[1], err[0], err[1], gate[0], gate[1]})
      if (fd >= 0) ::close(fd);
    return Internal(std::string("pipe: ") + std::strerror(e));
  }
  int pmi[2] = {-1, -1};  // --mpi=pmi2: [0] ours, [1] the task's
  std::vector<std::string> env_s = plan_.tasks[i].env;
  if (plan_.pmi) {
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pmi) != 0) {
      int e = errno;
      for (int fd : {out[0], out[1], err[0], err[1], gate[0], gate[1], in[0], in[1]})
        if (fd >= 0) ::close(fd);
      return Internal(std::string("socketpair: ") + std::strerror(e));
    }
    env_s.push_back("PMI_FD=3");
    env_s.push_back("PMI_RANK=" + std::to_string(p.rank));
    env_s.push_back("PMI_SIZE=" + std::to_string(plan_.pmi->size));
    env_s.push_back("PMI_JOBID=" + plan_.pmi->jobid);
  }
  std::vector<std::string> argv_s = plan_.argv;
  std::vector<char*> argv = CArray(argv_s), envp = CArray(env_s);
  ChildArgs a{&plan_, ::geteuid() == 0, devnull, out[1], err[1], gate[0], gate[1], argv.data(),
              envp.data()};
  if (!plan_.tasks[i].input.empty()) a.input = plan_.tasks[i].input.c_str();
  if (on_pty) a.pty_slave = out[1];
  a.pmi = pmi[1];
  a.stdin_r = in[0];
  pid_t pid = ::fork();
  if (pid == 0) ExecTask(a);
  int fork_errno = errno;
  if (in[0] >= 0) ::close(in[0]);
  if (in[1] >= 0 && pid < 0) ::close(in[1]);
  if (in[1] >= 0 && pid > 0) stdin_.Add(p.rank, in[1]);
  if (pmi[1] >= 0) ::close(pmi[1]);
  if (pid < 0 && pmi[0] >= 0) ::close(pmi[0]), pmi[0] = -1;
  ::close(out[1]);
  if (err[1] >= 0) ::close(err[1]);
  if (gate[0] >= 0) ::close(gate[0]);
  if (pid < 0) {
    ::close(out[0]);
    if (err[0] >= 0) ::close(err[0]);
    if (gate[1] >= 0) ::close(gate[1]);
    return Internal(std::string("fork: ") + std::strerror(fork_errno));
  }
  // Also in the child: whichever runs first. A pty task makes its own session instead (setsid
  // fails in a process group leader, so the parent must not make it one first).
  if (!on_pty) ::setpgid(pid, pid);
  std::string acct;
  if (gate[1] >= 0) {
    Status cg = plan_.cgroup->AddPid(plan_.cgroup_name, pid);
    if (!cg.ok() && log_) log_("warning: task rank " + std::to_string(p.rank) +
                               " runs outside the job's cgroup: " + cg.message());
    if (cg.ok() && plan_.usage && plan_.usage->enabled()) {  // issue 19: its accounting cgroup
      acct = TaskUsageCgroups::TaskName(plan_.cgroup_name, plan_.usage_step, p.rank);
      Status us = plan_.usage->Create(acct);
      if (us.ok()) us = plan_.usage->Join(acct, pid);
      if (!us.ok()) {
        if (log_) log_("warning: task rank " + std::to_string(p.rank) +
                       ": no accounting cgroup: " + us.message());
        acct.clear();
      }
    }
    ::close(gate[1]);
  }
  ::fcntl(out[0], F_SETFL, O_NONBLOCK);
  if (err[0] >= 0) ::fcntl(err[0], F_SETFL, O_NONBLOCK);
  if (on_pty) {
    std::lock_guard<std::mutex> lock(pty_mu_);
    pty_in_ = ::fcntl(out[0], F_DUPFD_CLOEXEC, 3);
  }
  if (pmi[0] >= 0) {
    std::lock_guard<std::mutex> lock(pmi_mu_);
    p.pmi = pmi[0];
  }
  std::lock_guard<std::mutex> lock(mu_);
  p.pid = pid;
  p.acct = acct;
  p.usage.rank = p.rank;
  p.out = out[0];
  p.err = err[0];
  return Status::Ok();
}

Status TaskSet::Input(const v1::StepInput& in) {
  if (in.has_fence_result()) {  // --mpi=pmi2: answer the tasks waiting in the fence
    std::lock_guard<std::mutex> lock(pmi_mu_);
    if (!pmi_) return FailedPrecondition("the step has no PMI-2 server (--mpi=pmi2) on this node");
    for (const auto& [rank, bytes] : pmi_->FenceDone(in.fence_result()))
      for (auto& p : procs_)
        if (p.rank == rank && p.pmi >= 0) WriteAll(p.pmi, bytes);
  }
  if (in.data().empty() && !in.eof() && in.rows() == 0) return Status::Ok();
  if (!stdin_.empty())  // -i all|N (h19 s7): trun's stdin for the tasks' pipes
    return in.data().empty() && !in.eof() ? Status::Ok() : stdin_.Push(in.data(), in.eof());
  std::lock_guard<std::mutex> lock(pty_mu_);
  if (pty_in_ < 0)
    return FailedPrecondition("the step has no terminal (--pty) and no task reading trun's "
                              "stdin on this node");
  if (in.rows() > 0 && in.cols() > 0) {
    winsize ws{};
    ws.ws_row = static_cast<unsigned short>(std::min<uint32_t>(in.rows(), 0xffff));
    ws.ws_col = static_cast<unsigned short>(std::min<uint32_t>(in.cols(), 0xffff));
    ::ioctl(pty_in_, TIOCSWINSZ, &ws);  // the terminal's foreground group gets SIGWINCH
  }
  std::string data = in.data();
  if (in.eof()) {  // the terminal's end-of-file character (^D unless the task changed it)
    termios t{};
    data += static_cast<char>(::tcgetattr(pty_in_, &t) == 0 ? t.c_cc[VEOF] : 4);
  }
  size_t done = 0;
  for (int waited = 0; done < data.size() && waited < 50;) {
    ssize_t n = ::write(pty_in_, data.data() + done, data.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return Internal(std::string("write to the pty: ") + std::strerror(errno));
    pollfd f{pty_in_, POLLOUT, 0};  // full: the task is not reading; wait a little
    ::poll(&f, 1, 100);
    ++waited;
  }
  if (done < data.size()) return ResourceExhausted("the task does not read its terminal");
  return Status::Ok();
}

void TaskSet::Signal(int sig) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& p : procs_)
    if (p.pid > 0 && !p.reaped) ::kill(-p.pid, sig);
}

void TaskSet::KillAll(int sig) { Signal(sig); }

bool TaskSet::Send(const Emit& emit, const v1::TaskOutput& m) {
  if (!m.has_usage()) {  // sattach copies (issue 19)
    std::lock_guard<std::mutex> lock(attached_mu_);
    for (auto& a : attached_) a->Push(m);
  }
  if (receiver_gone_) return false;
  if (!emit(m)) receiver_gone_ = true;
  return !receiver_gone_;
}

void TaskSet::ReadSome(Proc& p, int* fd, uint32_t stream, const Emit& emit) {
  char buf[kChunk];
  ssize_t n = ::read(*fd, buf, sizeof buf);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    ::close(*fd);
    *fd = -1;
    return;
  }
  v1::TaskOutput m;
  auto* d = m.mutable_data();
  d->set_rank(p.rank);
  d->set_stream(stream);
  d->set_data(buf, static_cast<size_t>(n));
  Send(emit, m);
}

void TaskSet::Reap(int64_t now) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& p : procs_) {
    if (p.pid <= 0 || p.reaped) continue;
    FoldEndedIo(p.pid, &p.usage);  // its /proc/<pid>/io before it goes (disk figures)
    if (::wait4(p.pid, &p.status, WNOHANG, &p.ru) != p.pid) continue;
    ::kill(-p.pid, SIGKILL);  // what the task left behind in its process group
    stdin_.Drop(p.rank);      // its stdin: nobody reads it any more
    p.reaped = true;
    p.reaped_ms = now;
  }
}

void TaskSet::Run(const Emit& emit, const std::function<bool()>& cancelled) {
  int64_t kill_at = -1;
  bool stopping = false;
  while (true) {
    int64_t now = MonoMs();
    if (!stopping && (cancel_ || receiver_gone_ || (cancelled && cancelled()))) {
      stopping = true;
      KillAll(SIGTERM);
      kill_at = now + plan_.kill_wait_ms;
      if (log_) log_("stopping the tasks: SIGTERM, SIGKILL in " +
                     std::to_string(plan_.kill_wait_ms) + " ms");
    }
    if (kill_at >= 0 && now >= kill_at) {
      KillAll(SIGKILL);
      kill_at = -1;
    }
    SampleUsage(now);
    Reap(now);
    bool all_done = true;
    std::vector<pollfd> fds;
    for (auto& p : procs_) {
      if (p.exit_sent) continue;
      if (p.reaped && now - p.reaped_ms >= kPipeGraceMs) {
        for (int* fd : {&p.out, &p.err})
          if (*fd >= 0) ::close(*fd), *fd = -1;
      }
      if (p.reaped && p.out < 0 && p.err < 0) {
        ClosePmi(p, emit);
        v1::TaskOutput m;
        auto* x = m.mutable_exit();
        x->set_rank(p.rank);
        if (WIFEXITED(p.status)) x->set_exit_code(WEXITSTATUS(p.status));
        if (WIFSIGNALED(p.status)) x->set_exit_signal(WTERMSIG(p.status));
        Send(emit, m);
        p.exit_sent = true;
        continue;
      }
      all_done = false;
      if (p.out >= 0) fds.push_back({p.out, POLLIN, 0});
      if (p.err >= 0) fds.push_back({p.err, POLLIN, 0});
      if (p.pmi >= 0) fds.push_back({p.pmi, POLLIN, 0});  // only this thread changes it
    }
    if (all_done) {
      stdin_.CloseAll();
      {
        std::lock_guard<std::mutex> lock(attached_mu_);
        finished_ = true;
        for (auto& a : attached_) a->End();
      }
      return FinishUsage(emit);
    }
    stdin_.PollFds(&fds);  // -i all|N: pipes with input still to write
    ::poll(fds.data(), fds.size(), 100);
    stdin_.Flush();
    for (auto& p : procs_) {
      for (auto& f : fds) {
        if (!(f.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        if (f.fd == p.out && p.out >= 0) ReadSome(p, &p.out, 1, emit);
        if (f.fd == p.err && p.err >= 0) ReadSome(p, &p.err, 2, emit);
        if (f.fd == p.pmi && p.pmi >= 0) ServePmi(p, emit);
      }
    }
  }
}

void TaskSet::ServePmi(Proc& p, const Emit& emit) {
  char buf[4096];
  ssize_t n = ::recv(p.pmi, buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) return ClosePmi(p, emit);
  std::optional<v1::PmiKvs> fence;
  std::string abort_msg;
  bool aborted = false;
  {
    std::lock_guard<std::mutex> lock(pmi_mu_);
    WriteAll(p.pmi, pmi_->Feed(p.rank, std::string_view(buf, static_cast<size_t>(n))));
    fence = pmi_->TakeFence();
    aborted = pmi_->Aborted(&abort_msg);
  }
  if (fence) {
    v1::TaskOutput m;
    *m.mutable_pmi_fence() = std::move(*fence);
    Send(emit, m);
  }
  if (aborted && !cancel_) {
    if (log_) log_("task " + std::to_string(p.rank) + " called PMI2_Abort (" + abort_msg +
                   "): stopping the step's tasks here");
    cancel_ = true;
  }
}

void TaskSet::ClosePmi(Proc& p, const Emit& emit) {
  std::optional<v1::PmiKvs> fence;
  {
    std::lock_guard<std::mutex> lock(pmi_mu_);
    if (p.pmi < 0) return;
    ::close(p.pmi);
    p.pmi = -1;
    fence = pmi_->Gone(p.rank);  // the others' fence no longer waits for it
  }
  if (fence) {
    v1::TaskOutput m;
    *m.mutable_pmi_fence() = std::move(*fence);
    Send(emit, m);
  }
}

void TaskSet::SampleUsage(int64_t now) {
  if (!plan_.usage || now - sampled_ms_ < 1000) return;
  sampled_ms_ = now;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& p : procs_)
    if (p.pid > 0 && !p.reaped && !p.acct.empty()) plan_.usage->Sample(p.acct, &p.usage);
}

void TaskSet::FinishUsage(const Emit& emit) {
  std::vector<TaskUsage> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& p : procs_) {
      if (p.pid <= 0) continue;
      FromRusage(p.ru, &p.usage);  // the cgroup's counters, where there is one, win
      if (!p.acct.empty()) plan_.usage->Read(p.acct, &p.usage);
      all.push_back(p.usage);
    }
  }
  if (plan_.usage) plan_.usage->RemoveStep(plan_.cgroup_name, plan_.usage_step);
  if (all.empty()) return;
  v1::TaskOutput m;
  *m.mutable_usage() = ToStepUsage(all, plan_.node_name);
  Send(emit, m);
}

std::shared_ptr<TaskSet::Attached> TaskSet::Attach() {
  auto a = std::make_shared<Attached>();
  std::lock_guard<std::mutex> lock(attached_mu_);
  if (finished_) a->End();
  else attached_.push_back(a);
  return a;
}

void TaskSet::Detach(const std::shared_ptr<Attached>& a) {
  std::lock_guard<std::mutex> lock(attached_mu_);
  attached_.erase(std::remove(attached_.begin(), attached_.end(), a), attached_.end());
}

void TaskSet::Attached::Push(const v1::TaskOutput& m) {
  std::lock_guard<std::mutex> lock(mu_);
  if (q_.size() >= 4096) q_.pop_front(), ++dropped_;
  q_.push_back(m);
  cv_.notify_all();
}

void TaskSet::Attached::End() {
  std::lock_guard<std::mutex> lock(mu_);
  ended_ = true;
  cv_.notify_all();
}

uint64_t TaskSet::Attached::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

std::optional<v1::TaskOutput> TaskSet::Attached::Next(int wait_ms, bool* ended) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(wait_ms), [&] { return !q_.empty() || ended_; });
  *ended = ended_ && q_.empty();
  if (q_.empty()) return std::nullopt;
  v1::TaskOutput m = std::move(q_.front());
  q_.pop_front();
  return m;
}

v1::StepUsage TaskSet::LiveUsage() {
  std::vector<TaskUsage> all;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& p : procs_) {
    if (p.pid <= 0 || p.reaped) continue;
    if (!p.acct.empty()) {
      plan_.usage->Sample(p.acct, &p.usage);
      plan_.usage->Read(p.acct, &p.usage);
    }
    all.push_back(p.usage);
  }
  return ToStepUsage(all, plan_.node_name);
}

}  // namespace tessera::noded
