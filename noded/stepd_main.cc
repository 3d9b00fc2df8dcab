// tessera-stepd --job-dir DIR --node NAME [--cluster NAME] [--notify SOCKET] [--gpu-uuids U,...]
// Runs the batch job described by DIR/launch.pb (isolated as DIR/isolation says, when present)
// and records how it ended in DIR/status.
//
// tessera-stepd --zygote --node NAME [--cluster NAME] [--notify SOCKET] [--gpu-uuids U,...]
// (noded starts one, fd 3 a SOCK_SEQPACKET socket to it): gets one job directory per message and
// answers "OK" or "ERR <message>"; exits when noded closes the socket. Each job runs in a stepd
// forked from the zygote (no exec), which after its job waits for the next one the zygote hands
// it (one job at a time, at most kJobsPerStepd, idle at most kIdleStepdMs): a burst of jobs
// reuses a few warm processes instead of forking, faulting in and tearing down one per job.
// These stepds outlive the zygote until their job ends, and log to its stderr (noded's log)
// instead of DIR/stepd.log.
//
// Started by tessera-noded (which waits for this first process to exit): it reads launch.pb
// (errors on stderr, exit 2), then detaches: the daemon child starts a new session, writes
// DIR/stepd.pid, redirects its own output to DIR/stepd.log and tells the first process, which
// exits 0. The daemon runs the job (job_runner.h), writes DIR/status atomically, sends the job id
// to the --notify socket (best effort) and exits. Killing noded never touches it.
// Control: SIGTERM = cancel; SIGUSR1 = forward a signal to the job; both name the job in their
// sigqueue value (stepd_signal.h), so a signal meant for a stepd's previous job is dropped.
#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <ctime>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "noded/job_runner.h"
#include "noded/job_status.h"
#include "noded/log.h"
#include "noded/notify_socket.h"
#include "noded/spool.h"

namespace tessera::noded {
namespace {

constexpr char kUsage[] =
    "usage: tessera-stepd --job-dir DIR --node NAME [--cluster NAME] [--notify SOCKET]"
    " [--gpu-uuids UUID,...]\n"
    "       tessera-stepd --zygote --node NAME [--cluster NAME] [--notify SOCKET] (fd 3: noded)\n"
    "Started by tessera-noded, never by hand: it supervises one job on this node.\n"
    "  --job-dir DIR       the job's spool directory (launch.pb)\n"
    "  --node NAME         this node's NodeName\n"
    "  --cluster NAME      the ClusterName (cgroup paths)\n"
    "  --notify SOCKET     noded's socket for the exit status\n"
    "  --gpu-uuids U,...   the node's GPU UUIDs, in index order\n"
    "  --zygote            run as noded's zygote (fd 3 is noded's end)\n"
    "  -h, --help          show this help\n"
    "  -V, --version       show the version\n";

struct Flags {
  std::string job_dir, notify;
  NodeFacts node;
  bool zygote = false;
};

void Log(const std::string& m) { LogLine("tessera-stepd", m); }

// How long the zygote trusts a user lookup (passwd entry and groups) for the next jobs.
constexpr int64_t kUserTtlMs = 10'000;
// A zygote-forked stepd runs at most this many jobs (bounding what a slow leak could hold); the
// zygote keeps at most kMaxIdleStepds of them waiting for a job, each for at most kIdleStepdMs.
constexpr int kJobsPerStepd = 1000;
constexpr size_t kMaxIdleStepds = 64;
constexpr int64_t kIdleStepdMs = 60'000;

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

bool ParseFlags(int argc, char** argv, Flags* f) {
  f->node.cluster_name = "tessera";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--zygote") {
      f->zygote = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    std::string v = argv[++i];
    if (a == "--job-dir") f->job_dir = v;
    else if (a == "--node") f->node.node_name = v;
    else if (a == "--cluster") f->node.cluster_name = v;
    else if (a == "--notify") f->notify = v;
    else if (a == "--gpu-uuids") f->node.gpu_uuids = SplitCommas(v);
    else return false;
  }
  return (f->zygote || !f->job_dir.empty()) && !f->node.node_name.empty();
}

// Reads DIR/launch.pb; "" on success, else the error line.
std::string ReadLaunch(const std::string& job_dir, tessera::v1::LaunchJob* launch) {
  std::string launch_path = job_dir + "/launch.pb";
  auto text = ReadFile(launch_path);
  if (!text.ok() || !launch->ParseFromString(*text))
    return "tessera-stepd: cannot read a LaunchJob from " + launch_path;
  return "";
}

// Writes "<pid> <start time>" to DIR/stepd.pid: from then on noded may signal this process for
// the job. "" on success, else the error line.
std::string WritePidFile(const std::string& job_dir) {
  auto start = ProcessStartTime(::getpid());
  std::string pid_line = std::to_string(::getpid()) +
                         (start.ok() ? " " + std::to_string(*start) : std::string()) + "\n";
  Status st = WriteFileAtomic(job_dir + "/stepd.pid", pid_line, Durability::kProcessCrash);
  return st.ok() ? "" : "tessera-stepd: " + st.message();
}

// Exec'd by noded: forks the supervising daemon. In the child (return 0): a new session, output
// in DIR/stepd.log, DIR/stepd.pid written; the parent (return the pid, or -1) learns through
// *ready whether the child got that far.
pid_t ForkSupervisor(const std::string& job_dir, bool* ready) {
  *ready = false;
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    std::perror("tessera-stepd: pipe");
    return -1;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("tessera-stepd: fork");
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return -1;
  }
  if (pid > 0) {
    ::close(pipefd[1]);
    char c = 0;
    *ready = ::read(pipefd[0], &c, 1) == 1 && c == 'R';
    ::close(pipefd[0]);
    return pid;
  }
  ::close(pipefd[0]);
  ::setsid();
  ::umask(022);
  std::string log_path = job_dir + "/stepd.log";
  int logfd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (logfd < 0) {
    std::fprintf(stderr, "tessera-stepd: cannot open %s: %m\n", log_path.c_str());
    ::_exit(1);
  }
  if (std::string err = WritePidFile(job_dir); !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    ::_exit(1);
  }
  int devnull = ::open("/dev/null", O_RDWR);
  ::dup2(devnull, 0);
  ::dup2(logfd, 1);
  ::dup2(logfd, 2);
  if (devnull > 2) ::close(devnull);
  ::close(logfd);
  ssize_t n = ::write(pipefd[1], "R", 1);
  (void)n;
  ::close(pipefd[1]);
  if (::chdir("/") != 0) Log("cannot chdir to /");
  return 0;
}

// The daemon's work: runs the job, records its end in DIR/status, notifies noded.
// `user`: the zygote's lookup of the submitter (nullptr: RunJob looks it up).
int Supervise(const Flags& f, const tessera::v1::LaunchJob& launch, const JobUser* user) {
  Log("job " + std::to_string(launch.job_id()) + ": supervising");
  JobRunOptions opts{f.node, f.job_dir + "/script", &Log};
  opts.user = user;
  // noded's isolation plan (cgroup, HCAs); absent when noded runs without cgroups.
  JobIsolation iso;
  if (auto text = ReadFile(f.job_dir + "/isolation"); text.ok()) {
    auto parsed = ParseJobIsolation(*text);
    if (!parsed.ok()) {
      JobStatus bad;
      bad.state = JobState::kFailed;
      bad.exit_code = 1;
      bad.end_time = time(nullptr);
      bad.message = parsed.status().message();
      Log("job " + std::to_string(launch.job_id()) + ": " + bad.message);
      (void)WriteStatusFile(f.job_dir + "/status", bad);
      if (!f.notify.empty()) (void)SendNotify(f.notify, launch.job_id());
      return 1;
    }
    iso = *parsed;
    opts.isolation = &iso;
  }
  JobStatus st = RunJob(launch, opts);
  Log("job " + std::to_string(launch.job_id()) + ": ended " + JobStateName(st.state) + " " +
      std::to_string(st.exit_code) + ":" + std::to_string(st.exit_signal) +
      (st.message.empty() ? "" : " (" + st.message + ")"));
  if (Status w = WriteStatusFile(f.job_dir + "/status", st); !w.ok()) {
    Log("cannot write status: " + w.message());
    return 1;
  }
  if (!f.notify.empty()) {
    if (Status n = SendNotify(f.notify, launch.job_id()); !n.ok()) Log(n.message());
  }
  return 0;
}

// Runs once what every job's daemon runs, so that the lazily initialized state it needs (time
// zone, iostream locale facets used by the status and isolation formats) is set up here, once,
// instead of in every forked daemon (where each page it writes is a copy-on-write fault).
void WarmUp() {
  (void)ParseJobIsolation(FormatJobIsolation(JobIsolation{}));
  (void)ParseJobStatus(FormatJobStatus(JobStatus{}), "warm-up");
  (void)ProcessStartTime(::getpid());
  Log("zygote pid " + std::to_string(::getpid()) + " ready");
}

int64_t NowMs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1000 + now.tv_nsec / 1'000'000;
}

// One SOCK_SEQPACKET message; "" when the peer is gone.
std::string Receive(int fd) {
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) < 0 && errno == EINTR) {
  }
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

bool Send(int fd, const std::string& m) {
  return ::send(fd, m.data(), m.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(m.size());
}

// Drops the cancel and forward signals that arrived for the jobs this stepd ran before (blocked,
// they stay pending while it waits for the next job).
void DropStaleSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  timespec zero{};
  while (::sigtimedwait(&set, nullptr, &zero) > 0) {
  }
}

// A zygote-forked stepd ("worker"): runs the job it was forked for, then the jobs the zygote
// sends it on `fd`, one at a time. Per request it answers "OK" (stepd.pid written, the job
// starts) or "ERR <why>", and "IDLE" once it can take the next one. It exits after
// kJobsPerStepd jobs or when the zygote closes `fd`.
[[noreturn]] void RunWorker(Flags f, int fd, std::string job_dir, tessera::v1::LaunchJob launch,
                            const JobUser* user, JobUserCache* users) {
  for (int jobs = 0;;) {
    std::string err = WritePidFile(job_dir);
    if (!Send(fd, err.empty() ? "OK" : "ERR " + err)) ::_exit(0);
    if (err.empty()) {
      f.job_dir = job_dir;
      (void)Supervise(f, launch, user);
      std::fflush(nullptr);
      ++jobs;
    }
    do {
      if (jobs >= kJobsPerStepd || !Send(fd, "IDLE")) ::_exit(0);
      job_dir = Receive(fd);
      if (job_dir.empty()) ::_exit(0);
      launch.Clear();
      err = ReadLaunch(job_dir, &launch);
    } while (!err.empty() && Send(fd, "ERR " + err));
    if (!err.empty()) ::_exit(0);
    DropStaleSignals();
    user = users->Get(launch.uid(), launch.gid(), NowMs());
  }
}

// The zygote: noded sends one job directory per SOCK_SEQPACKET message on fd 3 and gets "OK"
// (a new stepd was forked), "OK reused" (an idle one took the job) or "ERR <why>" back. An idle worker takes the job (the one idle the shortest time, whose pages
// are warm); with none idle the zygote forks a new one. Users are looked up before the fork and
// kept for kUserTtlMs (job_user.h); a worker keeps its own copy of that cache.
class Zygote {
 public:
  Zygote(const Flags& f, JobUserCache* users) : f_(f), users_(users) {}

  std::string Start(const std::string& job_dir) {
    for (Worker* w; (w = MostRecentlyIdle()) != nullptr;) {
      w->idle_since_ms = -1;
      std::string reply = Send(w->fd, job_dir) ? Receive(w->fd) : std::string();
      if (reply == "OK") return "OK reused";  // issue 20 §3: noded counts stepd reuse
      if (!reply.empty()) return reply;
      Retire(w->fd);  // it died while idle; the next one or a new one takes the job
    }
    return Fork(job_dir);
  }

  // Descriptors to poll after noded's socket and the signalfd.
  void AddPollFds(std::vector<pollfd>* fds) const {
    for (const Worker& w : workers_) fds->push_back({w.fd, POLLIN, 0});
  }

  // A worker's fd is readable: "IDLE", or closed.
  void OnReadable(int fd) {
    auto it = Find(fd);
    if (it == workers_.end()) return;
    if (Receive(fd) != "IDLE") return Retire(fd);
    it->idle_since_ms = NowMs();
    size_t idle = 0;
    for (const Worker& w : workers_) idle += w.idle_since_ms >= 0;
    if (idle > kMaxIdleStepds) RetireIdleSince(INT64_MAX);
  }

  // Ends workers idle since before now - kIdleStepdMs; returns the poll timeout until the next
  // one is due (-1: none idle).
  int Expire() {
    int64_t now = NowMs();
    RetireIdleSince(now - kIdleStepdMs);
    int64_t first = -1;
    for (const Worker& w : workers_)
      if (w.idle_since_ms >= 0 && (first < 0 || w.idle_since_ms < first)) first = w.idle_since_ms;
    return first < 0 ? -1 : static_cast<int>(std::max<int64_t>(0, first + kIdleStepdMs - now));
  }

 private:
  struct Worker {
    int fd;                      // the zygote's end of the worker's socket pair
    int64_t idle_since_ms = -1;  // -1: running a job or answering
  };

  std::vector<Worker>::iterator Find(int fd) {
    return std::find_if(workers_.begin(), workers_.end(), [fd](const Worker& w) { return w.fd == fd; });
  }

  Worker* MostRecentlyIdle() {
    Worker* best = nullptr;
    for (Worker& w : workers_)
      if (w.idle_since_ms >= 0 && (!best || w.idle_since_ms > best->idle_since_ms)) best = &w;
    return best;
  }

  // Closing its socket ends an idle worker (and a busy one after its job); SIGCHLD reaps it.
  void Retire(int fd) {
    ::close(fd);
    workers_.erase(Find(fd));
  }

  // Retires the idle worker idle the longest if it has been since before `before`.
  void RetireIdleSince(int64_t before) {
    for (;;) {
      const Worker* oldest = nullptr;
      for (const Worker& w : workers_)
        if (w.idle_since_ms >= 0 && (!oldest || w.idle_since_ms < oldest->idle_since_ms)) oldest = &w;
      if (!oldest || oldest->idle_since_ms >= before) return;
      Retire(oldest->fd);
      if (before == INT64_MAX) return;
    }
  }

  std::string Fork(const std::string& job_dir) {
    tessera::v1::LaunchJob launch;
    if (std::string err = ReadLaunch(job_dir, &launch); !err.empty()) return "ERR " + err;
    const JobUser* user = users_->Get(launch.uid(), launch.gid(), NowMs());
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
      return std::string("ERR tessera-stepd: socketpair: ") + std::strerror(errno);
    pid_t pid = ::fork();
    if (pid == 0) {
      // Its own socket as fd 3 (close-on-exec: the jobs do not inherit it), nothing else of the
      // zygote's: noded's socket, the signalfd, the other workers' sockets.
      ::dup3(sv[1], 3, O_CLOEXEC);
      ::close_range(4, ~0U, 0);
      ::umask(022);
      RunWorker(f_, 3, job_dir, std::move(launch), user, users_);
    }
    ::close(sv[1]);
    if (pid < 0) {
      ::close(sv[0]);
      return std::string("ERR tessera-stepd: fork: ") + std::strerror(errno);
    }
    workers_.push_back({sv[0]});
    std::string reply = Receive(sv[0]);
    if (!reply.empty()) return reply;
    Retire(sv[0]);
    return "ERR tessera-stepd: the forked stepd exited before the job started";
  }

  const Flags& f_;
  JobUserCache* users_;
  std::vector<Worker> workers_;
};

int RunZygote(const Flags& f) {
  const int sock = 3;
  ::setsid();  // out of noded's session and process group, for the stepds forked from here
  BlockJobSignals();
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&mask, s);
  int sfd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) return std::perror("tessera-stepd: signalfd"), 1;
  if (::chdir("/") != 0) Log("cannot chdir to /");
  WarmUp();
  const bool root = ::getuid() == 0;
  JobUserCache users([root](uid_t uid, gid_t gid) { return LookUpJobUser(uid, gid, root); },
                     kUserTtlMs);
  Zygote zygote(f, &users);
  std::vector<pollfd> fds;
  for (;;) {
    int timeout = zygote.Expire();
    fds = {{sock, POLLIN, 0}, {sfd, POLLIN, 0}};
    zygote.AddPollFds(&fds);
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return 1;
    if (fds[1].revents) {
      signalfd_siginfo si{};
      while (::read(sfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si))
        if (si.ssi_signo != SIGCHLD) return 0;
      int st = 0;
      while (::waitpid(-1, &st, WNOHANG) > 0) {
      }
    }
    for (size_t i = 2; i < fds.size(); ++i)
      if (fds[i].revents) zygote.OnReadable(fds[i].fd);
    if (fds[0].revents) {
      std::string job_dir = Receive(sock);
      if (job_dir.empty()) return 0;  // noded is gone; running jobs keep their stepds
      if (!Send(sock, zygote.Start(job_dir))) return 0;
    }
  }
}

int Main(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help"))
    return std::fputs(kUsage, stdout), 0;
  if (argc == 2 && (std::string(argv[1]) == "-V" || std::string(argv[1]) == "--version"))
    return std::fputs("tessera-stepd " TESSERA_VERSION "\n", stdout), 0;
  Flags f;
  if (!ParseFlags(argc, argv, &f)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (f.zygote) return RunZygote(f);
  tessera::v1::LaunchJob launch;
  if (std::string err = ReadLaunch(f.job_dir, &launch); !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 2;
  }
  BlockJobSignals();  // before the pid file exists, so an early cancel is queued, not fatal
  bool ready = false;
  pid_t pid = ForkSupervisor(f.job_dir, &ready);
  if (pid != 0) {
    if (pid > 0 && !ready)
      std::fprintf(stderr, "tessera-stepd: the detached stepd did not start\n");
    ::_exit(pid > 0 && ready ? 0 : 1);
  }
  return Supervise(f, launch, nullptr);
}

}  // namespace
}  // namespace tessera::noded

int main(int argc, char** argv) { return tessera::noded::Main(argc, argv); }
