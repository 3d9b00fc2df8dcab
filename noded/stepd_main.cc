// tessera-stepd --job-dir DIR --node NAME [--cluster NAME] [--notify SOCKET] [--gpu-uuids U,...]
// Runs the batch job described by DIR/launch.pb (isolated as DIR/isolation says, when present)
// and records how it ended in DIR/status.
//
// tessera-stepd --zygote --node NAME [--cluster NAME] [--notify SOCKET] [--gpu-uuids U,...]
// (noded starts one, fd 3 a SOCK_SEQPACKET socket to it): forks one daemon per job directory it
// is sent (no exec per job) and answers "OK" or "ERR <message>"; exits when noded closes the
// socket. The daemons are the same as below and outlive it, but log to the zygote's stderr
// (noded's log) instead of DIR/stepd.log.
//
// Started by tessera-noded (which waits for this first process to exit): it reads launch.pb
// (errors on stderr, exit 2), then detaches: the daemon child starts a new session, writes
// DIR/stepd.pid, redirects its own output to DIR/stepd.log and tells the first process, which
// exits 0. The daemon runs the job (job_runner.h), writes DIR/status atomically, sends the job id
// to the --notify socket (best effort) and exits. Killing noded never touches it.
// Control: SIGTERM = cancel; SIGUSR1 with a sigqueue value N = forward signal N to the job.
#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <ctime>
#include <string>

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
    "       tessera-stepd --zygote --node NAME [--cluster NAME] [--notify SOCKET] (fd 3: noded)\n";

struct Flags {
  std::string job_dir, notify;
  NodeFacts node;
  bool zygote = false;
};

void Log(const std::string& m) { LogLine("tessera-stepd", m); }

// How long the zygote trusts a user lookup (passwd entry and groups) for the next jobs.
constexpr int64_t kUserTtlMs = 10'000;

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

// Forks the supervising daemon: in the child (return 0) a new session with its output in
// DIR/stepd.log (own_log; else it stays in the caller's session and output: the zygote made its
// own session once, away from noded's, and its output is noded's log) and
// "<pid> <start time>" in DIR/stepd.pid; the parent (return the pid, or -1) learns through
// *ready whether the child got that far.
pid_t ForkSupervisor(const std::string& job_dir, bool own_log, bool* ready) {
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
  // A new session per daemon only when exec'd by noded: each setsid() also makes a scheduler
  // autogroup, and the job's process gets its own session anyway.
  if (own_log) ::setsid();
  ::umask(022);
  std::string log_path = job_dir + "/stepd.log";
  int logfd = own_log ? ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
                      : ::dup(STDERR_FILENO);
  if (logfd < 0) {
    std::fprintf(stderr, "tessera-stepd: cannot open %s: %m\n", log_path.c_str());
    ::_exit(1);
  }
  auto start = ProcessStartTime(::getpid());
  std::string pid_line = std::to_string(::getpid()) +
                         (start.ok() ? " " + std::to_string(*start) : std::string()) + "\n";
  Status st = WriteFileAtomic(job_dir + "/stepd.pid", pid_line, Durability::kProcessCrash);
  if (!st.ok()) {
    std::fprintf(stderr, "tessera-stepd: %s\n", st.message().c_str());
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

// Zygote: one request per job, the job directory as one SOCK_SEQPACKET message on fd 3; starts
// the job's daemon (forked, not exec'd) and answers "OK" or "ERR <why>".
// Users are looked up here, before the fork, and kept for kUserTtlMs (job_user.h).
std::string StartFromZygote(Flags f, const std::string& job_dir, int sock, int sfd,
                            JobUserCache* users) {
  tessera::v1::LaunchJob launch;
  if (std::string err = ReadLaunch(job_dir, &launch); !err.empty()) return "ERR " + err;
  f.job_dir = job_dir;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const JobUser* user = users->Get(launch.uid(), launch.gid(),
                                   int64_t{now.tv_sec} * 1000 + now.tv_nsec / 1'000'000);
  bool ready = false;
  pid_t pid = ForkSupervisor(job_dir, /*own_log=*/false, &ready);
  if (pid == 0) {
    ::close(sock);
    ::close(sfd);
    int rc = Supervise(f, launch, user);
    std::fflush(nullptr);
    ::_exit(rc);
  }
  if (pid < 0) return std::string("ERR tessera-stepd: fork: ") + std::strerror(errno);
  return ready ? "OK" : "ERR tessera-stepd: the detached stepd did not start";
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

int RunZygote(const Flags& f) {
  const int sock = 3;
  ::setsid();  // out of noded's session and process group, for the daemons forked from here
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
  for (;;) {
    pollfd p[2] = {{sock, POLLIN, 0}, {sfd, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno != EINTR) return 1;
    if (p[1].revents) {
      signalfd_siginfo si{};
      while (::read(sfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si))
        if (si.ssi_signo != SIGCHLD) return 0;
      int st = 0;
      while (::waitpid(-1, &st, WNOHANG) > 0) {
      }
    }
    if (p[0].revents) {
      char buf[4096];
      ssize_t n = ::recv(sock, buf, sizeof buf, 0);
      if (n <= 0) return 0;  // noded is gone; running jobs keep their daemons
      std::string reply = StartFromZygote(f, std::string(buf, static_cast<size_t>(n)), sock, sfd,
                                          &users);
      if (::send(sock, reply.data(), reply.size(), MSG_NOSIGNAL) < 0) return 0;
    }
  }
}

int Main(int argc, char** argv) {
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
  pid_t pid = ForkSupervisor(f.job_dir, /*own_log=*/true, &ready);
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
