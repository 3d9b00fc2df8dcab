#include "noded/task_set.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/stat.h>
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
};

// Runs in the forked child of a multi-threaded process: async-signal-safe calls only.
[[noreturn]] void ExecTask(const ChildArgs& a) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int s = 1; s < NSIG; ++s)
    if (s != SIGKILL && s != SIGSTOP) ::signal(s, SIG_DFL);
  ::setpgid(0, 0);
  ::dup2(a.devnull, 0);
  ::dup2(a.out, 1);
  ::dup2(a.err, 2);
  // Close every other descriptor inherited from noded before waiting on the gate: among them
  // are the gate and output pipes of tasks another RunTasks thread is starting at this moment.
  // Holding another task's gate open while waiting on our own deadlocks both tasks when each
  // holds the other's (both pipes made before either fork): issue 18's trun steps that never
  // ran under load. (O_CLOEXEC only helps from exec on.)
  int gate = a.gate;
  if (gate >= 0 && gate != 3) {
    gate = ::dup2(a.gate, 3) == 3 ? 3 : -1;  // (fd 3 was no one's we need: 0-2 are set above)
  }
  ::close_range(gate >= 0 ? 4 : 3, ~0U, 0);
  if (a.gate >= 0 && gate < 0) ::_exit(126);
  if (gate >= 0) {  // wait until noded moved us into the job's cgroup (it closes its gate end)
    char c;
    while (::read(gate, &c, 1) < 0 && errno == EINTR) {
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
  ::close_range(3, ~0U, 0);
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

TaskSet::TaskSet(TaskPlan plan, LogFn log) : plan_(std::move(plan)), log_(std::move(log)) {}

TaskSet::~TaskSet() {
  KillAll(SIGKILL);
  for (auto& p : procs_) {
    if (p.pid > 0 && !p.reaped)
      while (::waitpid(p.pid, &p.status, 0) < 0 && errno == EINTR) {
      }
    if (p.out >= 0) ::close(p.out);
    if (p.err >= 0) ::close(p.err);
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

Status TaskSet::StartOne(size_t i, int devnull) {
  Proc& p = procs_[i];
  p.rank = plan_.tasks[i].rank;
  int out[2], err[2], gate[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]), ::close(out[1]);
    return Internal(std::string("pipe: ") + std::strerror(errno));
  }
  if (plan_.cgroup && ::pipe2(gate, O_CLOEXEC) != 0) gate[0] = gate[1] = -1;
  std::vector<std::string> argv_s = plan_.argv;
  std::vector<std::string> env_s = plan_.tasks[i].env;
  std::vector<char*> argv = CArray(argv_s), envp = CArray(env_s);
  ChildArgs a{&plan_, ::geteuid() == 0, devnull, out[1], err[1], gate[0], gate[1], argv.data(),
              envp.data()};
  if (!plan_.tasks[i].input.empty()) a.input = plan_.tasks[i].input.c_str();
  pid_t pid = ::fork();
  if (pid == 0) ExecTask(a);
  int fork_errno = errno;
  ::close(out[1]);
  ::close(err[1]);
  if (gate[0] >= 0) ::close(gate[0]);
  if (pid < 0) {
    ::close(out[0]), ::close(err[0]);
    if (gate[1] >= 0) ::close(gate[1]);
    return Internal(std::string("fork: ") + std::strerror(fork_errno));
  }
  ::setpgid(pid, pid);  // also in the child: whichever runs first
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
  ::fcntl(err[0], F_SETFL, O_NONBLOCK);
  std::lock_guard<std::mutex> lock(mu_);
  p.pid = pid;
  p.acct = acct;
  p.usage.rank = p.rank;
  p.out = out[0];
  p.err = err[0];
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
    if (::wait4(p.pid, &p.status, WNOHANG, &p.ru) != p.pid) continue;
    ::kill(-p.pid, SIGKILL);  // what the task left behind in its process group
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
    }
    if (all_done) {
      {
        std::lock_guard<std::mutex> lock(attached_mu_);
        finished_ = true;
        for (auto& a : attached_) a->End();
      }
      return FinishUsage(emit);
    }
    ::poll(fds.data(), fds.size(), 100);
    for (auto& p : procs_) {
      for (auto& f : fds) {
        if (!(f.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        if (f.fd == p.out && p.out >= 0) ReadSome(p, &p.out, 1, emit);
        if (f.fd == p.err && p.err >= 0) ReadSome(p, &p.err, 2, emit);
      }
    }
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
