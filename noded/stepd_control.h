#pragma once
// How noded starts and signals tessera-stepd. OS-facing, so it sits behind an interface; the
// job manager's tests use a fake.
//
// Control channel noded -> stepd is signals to the stepd pid (recorded in <job dir>/stepd.pid and
// verified before use), queued with a value naming the job (stepd_signal.h):
//   SIGTERM     cancel: stepd sends SIGTERM to the job's process group, waits KillWait, then
//               SIGKILL; the job ends CANCELLED.
//   SIGUSR1     forward signal N to the job's process group (job goes on).
// stepd -> noded: the status file plus a best-effort datagram "<job id>" to <spool>/noded.sock.
#include <atomic>
#include <sys/types.h>

#include <cstdint>
#include <mutex>
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
  virtual Status Cancel(uint64_t job_id, pid_t stepd_pid) = 0;
  virtual Status Forward(uint64_t job_id, pid_t stepd_pid, int signal) = 0;
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
  Status Cancel(uint64_t job_id, pid_t stepd_pid) override;
  Status Forward(uint64_t job_id, pid_t stepd_pid, int signal) override;

 private:
  StepdArgs args_;
};

// Starts stepds through one long-lived `tessera-stepd --zygote` (a child of noded, started on
// first use and again when it died): the zygote forks each job's daemon without an exec, which
// saves loading the program, its libraries and the NSS modules for every job. Anything wrong with
// the zygote (it cannot be started, or dies mid-request twice) falls back to `fallback`, the
// exec per job. Thread-safe.
class ZygoteStepdControl final : public StepdControl {
 public:
  explicit ZygoteStepdControl(StepdArgs args) : args_(args), fallback_(std::move(args)) {}
  ~ZygoteStepdControl() override;
  // Starts the zygote now (noded's start), so the first job does not wait for it.
  Status Prestart();
  Status Start(uint64_t job_id, const std::string& job_dir) override;
  Status Cancel(uint64_t job_id, pid_t stepd_pid) override {
    return fallback_.Cancel(job_id, stepd_pid);
  }
  // Issue 20 §3 (stepd reuse, read by the metrics endpoint from any thread): jobs taken by an
  // idle stepd (reused), by a stepd the zygote forked, by an exec'd one (the fallback); and
  // zygotes spawned.
  struct Counts {
    std::atomic<uint64_t> reused{0}, forks{0}, execs{0}, zygote_spawns{0};
  };
  const Counts& counts() const { return counts_; }
  Status Forward(uint64_t job_id, pid_t stepd_pid, int signal) override {
    return fallback_.Forward(job_id, stepd_pid, signal);
  }

 private:
  Status Spawn();
  void Reap();
  // One request/answer with the running zygote; kUnavailable when it is gone.
  Status Ask(uint64_t job_id, const std::string& job_dir);

  StepdArgs args_;
  OsStepdControl fallback_;
  std::mutex mu_;
  int sock_ = -1;
  pid_t pid_ = -1;
  Counts counts_;
};

// The tessera-stepd next to the running executable (/proc/self/exe).
std::string StepdPathNextToSelf();

}  // namespace tessera::noded
