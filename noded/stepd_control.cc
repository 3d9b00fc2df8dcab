#include "noded/stepd_control.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

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
  pid_t child = ::fork();
  if (child < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return Internal(std::string("fork: ") + strerror(errno));
  }
  if (child == 0) {  // only async-signal-safe calls until exec
    ::setsid();
    int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
    ::dup2(pipefd[1], 2);
    ::close_range(3, ~0U, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(argv[0], argv.data());
    const char msg[] = "cannot execute tessera-stepd\n";
    ssize_t n = ::write(2, msg, sizeof msg - 1);
    (void)n;
    ::_exit(127);
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

Status OsStepdControl::Cancel(pid_t pid) {
  if (::kill(pid, SIGTERM) != 0)
    return Internal("kill(" + std::to_string(pid) + ", SIGTERM): " + strerror(errno));
  return Status::Ok();
}

Status OsStepdControl::Forward(pid_t pid, int signal) {
  union sigval v;
  v.sival_int = signal;
  if (::sigqueue(pid, SIGUSR1, v) != 0)
    return Internal("sigqueue(" + std::to_string(pid) + "): " + strerror(errno));
  return Status::Ok();
}

std::string StepdPathNextToSelf() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "tessera-stepd";
  return (self.parent_path() / "tessera-stepd").string();
}

}  // namespace tessera::noded
