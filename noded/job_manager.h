#pragma once
// The jobs this node knows: running (stepd alive) and finished-but-unacknowledged. Turns
// controller commands into spool files and stepd operations, and job ends into JobFinished
// messages. Not thread-safe: one thread (the agent loop) owns it.
//
// Invariants:
//  - A job is in at most one of running/finished. Its spool directory exists exactly as long
//    as it is in one of them (removed on FinishedAck).
//  - Every finished job has a status file in its directory, so a restart reports it again.
//  - Launch is idempotent per (job, run): a launch of the run already known (running or
//    unacked), or of an earlier run, is ignored. A job's run (LaunchJob.run, the controller's
//    launch number, new after every requeue) is stored with it (launch.pb in its directory) and
//    carried by its JobStarted/JobFinished. A launch of a LATER run while an earlier run of the
//    same job is known here waits: the earlier run is cancelled, ends, is reported with its own
//    run and acknowledged (its directory freed), and only then the new run starts (with one
//    directory per job id, the two runs never share it). Signals and acks name a run too and
//    reach only that run (0 = whichever).
//  - Running()/RunOf() report a job with a waiting launch as its newest run.
//  - With a planner, every launched job's directory has an `isolation` file (job_isolation.h)
//    written before stepd starts; its cores go back to the core map when the job finishes.
//  - Launch failures (spool write, script ownership, stepd start) become JobFinished FAILED
//    with the reason in `message`.
#include <atomic>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "noded/job_isolation.h"
#include "noded/job_status.h"
#include "noded/mps_control.h"
#include "noded/spool.h"
#include "noded/stepd_control.h"
#include "tessera/v1/agent.pb.h"

namespace tessera::noded {

class JobManager {
 public:
  using LogFn = std::function<void(const std::string&)>;
  // `planner` (may be null: no isolation file, no cgroup) plans each job's cgroup/cores/HCAs;
  // its core map is restored from the running jobs' isolation files in Recover.
  JobManager(Spool spool, StepdControl& control, const StepdProbe& probe, const Clock& clock,
             LogFn log, IsolationPlanner* planner = nullptr);

  // Scans the spool after a (re)start: reattaches running jobs, reports finished ones, turns
  // lost ones (no status, no live stepd) into FAILED "tessera-stepd for job N was lost".
  Status Recover();

  // Launch, Signal, Ack and Poll must be called from one thread: Signal relies on no job being
  // launched between its check that the job has not ended and the signal it queues.
  void Launch(const tessera::v1::LaunchJob& launch);
  // signal 0 = cancel. Unknown or finished jobs (a status file written) are ignored (logged).
  // `run` != 0: only that run (another run's signal is ignored); a cancel of a run whose launch
  // waits makes it end CANCELLED without starting.
  void Signal(uint64_t job_id, int signal, uint64_t run = 0);
  // Forgets a finished job and deletes its spool directory; then starts a launch that waited
  // for it. `run` != 0: only an ack of the run that ended here counts.
  void Ack(uint64_t job_id, uint64_t run = 0);
  // Checks every running job for a status file or a dead stepd.
  void Poll();
  // The same for one job (stepd's notification names it); not running here: nothing.
  void PollJob(uint64_t job_id);

  std::vector<uint64_t> Running() const;
  // The run of a known job (its waiting launch's when there is one); 0 = unknown.
  uint64_t RunOf(uint64_t id) const;
  // The run of the started (running or finished) job; 0 = unknown.
  uint64_t RunOfStarted(uint64_t id) const;
  std::vector<tessera::v1::JobFinished> Unacked() const;
  // Messages produced since the last call (JobStarted, JobFinished), in order.
  std::vector<tessera::v1::NodeMessage> TakeOutbox();
  bool IsRunning(uint64_t id) const { return running_.count(id) > 0; }
  bool IsFinished(uint64_t id) const { return finished_.count(id) > 0; }
  // MIG UUID -> running job using it on this node (from the jobs' allocations).
  std::map<std::string, uint64_t> MigInUse() const;
  // GPU sharing (mps_control.h): an mps job's launch is completed and its GPU's MPS daemon
  // started (first job) before its stepd starts, and stopped when the GPU's last job ends. A
  // daemon that cannot start fails the launch. Null (default): launches are used as they come.
  void SetMpsServers(MpsServers* mps) { mps_ = mps; }
  // Issue 20 §3: launches started (a stepd runs) and launches that failed here, since noded
  // started; readable from any thread (the metrics endpoint).
  uint64_t launches() const { return launches_.load(std::memory_order_relaxed); }
  uint64_t launch_failures() const { return launch_failures_.load(std::memory_order_relaxed); }
  size_t running_now() const { return running_now_.load(std::memory_order_relaxed); }

 private:
  Status PrepareJobDir(const tessera::v1::LaunchJob& launch);
  void Finish(uint64_t id, const JobStatus& status);
  // Writes a FAILED status file (so the end survives a restart) and finishes the job.
  void Fail(uint64_t id, const std::string& message);
  // Starts `launch` now (nothing of its job is known here).
  void Start(const tessera::v1::LaunchJob& launch);
  // Start's part once the launch is complete (MPS prepared).
  void StartPrepared(const tessera::v1::LaunchJob& launch);
  // A launch of a later run while `id` is known here: waits (see the class comment).
  void Defer(const tessera::v1::LaunchJob& launch);
  // Signal's part for the started run of `id` (running_).
  void SignalStarted(uint64_t id, int signal, uint64_t run);
  // Ends a waiting launch that was cancelled, without starting it: CANCELLED for its run.
  void EndCancelled(const tessera::v1::LaunchJob& launch);

  Spool spool_;
  StepdControl& control_;
  const StepdProbe& probe_;
  const Clock& clock_;
  LogFn log_;
  void Track(const tessera::v1::LaunchJob& launch);
  IsolationPlanner* planner_;
  MpsServers* mps_ = nullptr;
  std::map<uint64_t, std::vector<std::string>> mig_;  // running job -> its MIG UUIDs here
  std::map<uint64_t, pid_t> running_;
  std::map<uint64_t, JobStatus> finished_;
  std::map<uint64_t, uint64_t> runs_;  // known job -> its run here (0 = unknown, old launch.pb)
  struct Waiting {
    tessera::v1::LaunchJob launch;
    bool cancelled = false;
  };
  std::map<uint64_t, Waiting> waiting_;  // launches of a later run, started after the ack
  std::vector<tessera::v1::NodeMessage> outbox_;
  std::atomic<uint64_t> launches_{0}, launch_failures_{0};
  std::atomic<size_t> running_now_{0};  // running_.size(), for other threads
};

tessera::v1::JobFinished ToJobFinished(uint64_t id, const JobStatus& s, uint64_t run = 0);

}  // namespace tessera::noded
