// tessera-stepd --job-dir DIR --node NAME [--cluster NAME] [--notify SOCKET] [--gpu-uuids U,...]
// Runs the batch job described by DIR/launch.pb (isolated as DIR/isolation says, when present)
// and records how it ended in DIR/status.
//
// Started by tessera-noded (which waits for this first process to exit): it reads launch.pb
// (errors on stderr, exit 2), then detaches: the daemon child starts a new session, writes
// DIR/stepd.pid, redirects its own output to DIR/stepd.log and tells the first process, which
// exits 0. The daemon runs the job (job_runner.h), writes DIR/status atomically, sends the job id
// to the --notify socket (best effort) and exits. Killing noded never touches it.
// Control: SIGTERM = cancel; SIGUSR1 with a sigqueue value N = forward signal N to the job.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <ctime>
#include <string>

#include "noded/job_runner.h"
#include "noded/job_status.h"
#include "noded/log.h"
#include "noded/notify_socket.h"

namespace tessera::noded {
namespace {

constexpr char kUsage[] =
    "usage: tessera-stepd --job-dir DIR --node NAME [--cluster NAME] [--notify SOCKET]"
    " [--gpu-uuids UUID,...]\n";

struct Flags {
  std::string job_dir, notify;
  NodeFacts node;
};

void Log(const std::string& m) { LogLine("tessera-stepd", m); }

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
    if (i + 1 >= argc) return false;
    std::string v = argv[++i];
    if (a == "--job-dir") f->job_dir = v;
    else if (a == "--node") f->node.node_name = v;
    else if (a == "--cluster") f->node.cluster_name = v;
    else if (a == "--notify") f->notify = v;
    else if (a == "--gpu-uuids") f->node.gpu_uuids = SplitCommas(v);
    else return false;
  }
  return !f->job_dir.empty() && !f->node.node_name.empty();
}

// Forks the daemon. Returns in the daemon only; the first process exits here.
void Daemonize(const std::string& job_dir) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) {
    std::perror("tessera-stepd: pipe");
    ::_exit(1);
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("tessera-stepd: fork");
    ::_exit(1);
  }
  if (pid > 0) {
    ::close(ready[1]);
    char c = 0;
    bool ok = ::read(ready[0], &c, 1) == 1 && c == 'R';
    if (!ok) std::fprintf(stderr, "tessera-stepd: the detached stepd did not start\n");
    ::_exit(ok ? 0 : 1);
  }
  ::close(ready[0]);
  ::setsid();
  ::umask(022);
  std::string log_path = job_dir + "/stepd.log";
  int logfd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (logfd < 0) {
    std::fprintf(stderr, "tessera-stepd: cannot open %s: %m\n", log_path.c_str());
    ::_exit(1);
  }
  Status st = WriteFileAtomic(job_dir + "/stepd.pid", std::to_string(::getpid()) + "\n");
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
  ssize_t n = ::write(ready[1], "R", 1);
  (void)n;
  ::close(ready[1]);
  if (::chdir("/") != 0) Log("cannot chdir to /");
}

int Main(int argc, char** argv) {
  Flags f;
  if (!ParseFlags(argc, argv, &f)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string launch_path = f.job_dir + "/launch.pb";
  std::ifstream in(launch_path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  tessera::v1::LaunchJob launch;
  if (!in || !launch.ParseFromString(ss.str())) {
    std::fprintf(stderr, "tessera-stepd: cannot read a LaunchJob from %s\n", launch_path.c_str());
    return 2;
  }
  BlockJobSignals();  // before the pid file exists, so an early cancel is queued, not fatal
  Daemonize(f.job_dir);
  Log("job " + std::to_string(launch.job_id()) + ": supervising");
  JobRunOptions opts{f.node, f.job_dir + "/script", &Log};
  // noded's isolation plan (cgroup, HCAs); absent when noded runs without cgroups.
  JobIsolation iso;
  std::ifstream iso_in(f.job_dir + "/isolation");
  if (iso_in) {
    std::stringstream text;
    text << iso_in.rdbuf();
    auto parsed = ParseJobIsolation(text.str());
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

}  // namespace
}  // namespace tessera::noded

int main(int argc, char** argv) { return tessera::noded::Main(argc, argv); }
