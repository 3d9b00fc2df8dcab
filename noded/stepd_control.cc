#include "noded/stepd_control.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>
#include <climits>
#include <cstring>
#include <filesystem>

#include "noded/stepd_signal.h"

extern char** environ;

namespace tessera::noded {

std::vector<std::string> StepdCommandLine(const StepdArgs& a, const std::string& job_dir) {
  std::vector<std::string> argv = {a.stepd_path, "--job-dir", job_dir,       "--node",
                                   a.node_name,  "--cluster", a.cluster_name, "--notify",
                                   a.notify_socket};
  if (!a.gpu_uuids.empty()) {
    std::string joined;
    for (const auto& u : a.gpu_uuids) joined += (joined.empty() ? "" : ",") + u;
    argv.push_back("--gpu-uuids");
    argv.push_back(joined);
  }
  return argv;
}

Status OsStepdControl::Start(uint64_t job_id, const std::string& job_dir) {
  std::vector<std::string> args = StepdCommandLine(args_, job_dir);
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + strerror(errno));
  // posix_spawn (vfork-like in glibc): no copy of noded's page tables per job. The child gets
  // its own session, /dev/null as stdin/stdout, the pipe as stderr, no other descriptors and
  // no blocked signals.
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_RDWR, 0);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
  pid_t child = -1;
  int rc = ::posix_spawn(&child, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return Internal("cannot start tessera-stepd (" + args_.stepd_path + ") for job " +
                    std::to_string(job_id) + ": cannot execute tessera-stepd: " + strerror(rc));
  }
  ::close(pipefd[1]);
  std::string err;
  char buf[512];
  for (;;) {
    ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (err.size() < 4096) err.append(buf, static_cast<size_t>(n));
  }
  ::close(pipefd[0]);
  int wstatus = 0;
  while (::waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
  }
  while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) return Status::Ok();
  if (err.empty()) err = "tessera-stepd exited with status " + std::to_string(wstatus);
  return Internal("cannot start tessera-stepd (" + args_.stepd_path + ") for job " +
                  std::to_string(job_id) + ": " + err);
}

namespace {
Status Queue(pid_t pid, int sig, uint64_t value) {
  union sigval v;
  v.sival_ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(value));
  if (::sigqueue(pid, sig, v) != 0)
    return Internal("sigqueue(" + std::to_string(pid) + ", " + sigabbrev_np(sig) +
                    "): " + strerror(errno));
  return Status::Ok();
}
}  // namespace

Status OsStepdControl::Cancel(uint64_t job_id, pid_t pid) {
  return Queue(pid, SIGTERM, StepdSignalValue(job_id, 0));
}

Status OsStepdControl::Forward(uint64_t job_id, pid_t pid, int signal) {
  return Queue(pid, SIGUSR1, StepdSignalValue(job_id, signal));
}

ZygoteStepdControl::~ZygoteStepdControl() {
  if (sock_ >= 0) ::close(sock_);  // the zygote exits on EOF; its jobs' daemons keep running
  Reap();
}

void ZygoteStepdControl::Reap() {
  if (pid_ > 0) {
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

Status ZygoteStepdControl::Spawn() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return Internal(std::string("socketpair: ") + strerror(errno));
  std::vector<std::string> args = StepdCommandLine(args_, "");
  args.erase(args.begin() + 1, args.begin() + 3);  // no --job-dir
  args.insert(args.begin() + 1, "--zygote");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 3);  // stdout/stderr: noded's log
  posix_spawn_file_actions_addclosefrom_np(&fa, 4);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
  int rc = ::posix_spawn(&pid_, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    pid_ = -1;
    return Internal("cannot start " + args_.stepd_path + " --zygote: " + strerror(rc));
  }
  sock_ = sv[0];
  counts_.zygote_spawns.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

Status ZygoteStepdControl::Ask(uint64_t job_id, const std::string& job_dir) {
  if (::send(sock_, job_dir.data(), job_dir.size(), MSG_NOSIGNAL) < 0)
    return Unavailable(std::string("zygote: send: ") + strerror(errno));
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(sock_, buf, sizeof buf, 0)) < 0 && errno == EINTR) {
  }
  if (n <= 0) return Unavailable("the stepd zygote exited");
  std::string reply(buf, static_cast<size_t>(n));
  if (reply == "OK" || reply == "OK reused") {
    (reply == "OK" ? counts_.forks : counts_.reused).fetch_add(1, std::memory_order_relaxed);
    return Status::Ok();
  }
  if (reply.rfind("ERR ", 0) == 0) reply = reply.substr(4);
  return Internal("cannot start tessera-stepd (" + args_.stepd_path + ") for job " +
                  std::to_string(job_id) + ": " + reply);
}

Status ZygoteStepdControl::Prestart() {
  std::lock_guard<std::mutex> lock(mu_);
  return sock_ >= 0 ? Status::Ok() : Spawn();
}

Status ZygoteStepdControl::Start(uint64_t job_id, const std::string& job_dir) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (sock_ < 0 && !Spawn().ok()) break;
    Status st = Ask(job_id, job_dir);
    if (st.code() != Code::kUnavailable) return st;
    ::close(sock_);  // gone (killed, crashed): reap it and start a new one
    sock_ = -1;
    Reap();
    // It may have died after forking the job's daemon, which writes stepd.pid before anything
    // else: then the job runs, and a second start would run it twice.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (::access((job_dir + "/stepd.pid").c_str(), F_OK) == 0) return Status::Ok();
  }
  Status st = fallback_.Start(job_id, job_dir);
  if (st.ok()) counts_.execs.fetch_add(1, std::memory_order_relaxed);
  return st;
}

std::string StepdPathNextToSelf() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "tessera-stepd";
  return (self.parent_path() / "tessera-stepd").string();
}

}  // namespace tessera::noded
