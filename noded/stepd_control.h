#pragma once
// How noded starts and signals tessera-stepd. OS-facing, so it sits behind an interface; the
// job manager's tests use a fake.
//
// Control channel noded -> stepd is signals to the stepd pid (recorded in <job dir>/stepd.pid and
// verified through /proc/<pid>/cmdline before use):
//   SIGTERM                         cancel: stepd sends SIGTERM to the job's process group,
//                                   waits KillWait, then SIGKILL; the job ends CANCELLED.
//   SIGUSR1 via sigqueue, value N   forward signal N to the job's process group (job goes on).
// stepd -> noded: the status file plus a best-effort datagram "<job id>" to <spool>/noded.sock.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::noded {

class StepdControl {
 public:
  virtual ~StepdControl() = default;
  // Starts a detached stepd for the job whose files are in `job_dir`. Returns once stepd has
  // daemonized and written stepd.pid, or with an error carrying stepd's own message.
  virtual Status Start(uint64_t job_id, const std::string& job_dir) = 0;
  virtual Status Cancel(pid_t stepd_pid) = 0;
  virtual Status Forward(pid_t stepd_pid, int signal) = 0;
};

struct StepdArgs {
  std::string stepd_path;       // the tessera-stepd executable
  std::string node_name;
  std::string cluster_name;
  std::string notify_socket;    // <spool>/noded.sock
  std::vector<std::string> gpu_uuids;  // indexed by GPU index
};

// The tessera-stepd command line for a job directory (argv[0] is the path).
std::vector<std::string> StepdCommandLine(const StepdArgs& args, const std::string& job_dir);

class OsStepdControl final : public StepdControl {
 public:
  explicit OsStepdControl(StepdArgs args) : args_(std::move(args)) {}
  Status Start(uint64_t job_id, const std::string& job_dir) override;
  Status Cancel(pid_t stepd_pid) override;
  Status Forward(pid_t stepd_pid, int signal) override;

 private:
  StepdArgs args_;
};

// The tessera-stepd next to the running executable (/proc/self/exe).
std::string StepdPathNextToSelf();

}  // namespace tessera::noded
