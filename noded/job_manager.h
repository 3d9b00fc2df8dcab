#pragma once
// The jobs this node knows: running (stepd alive) and finished-but-unacknowledged. Turns
// controller commands into spool files and stepd operations, and job ends into JobFinished
// messages. Not thread-safe: one thread (the agent loop) owns it.
//
// Invariants:
//  - A job is in at most one of running/finished. Its spool directory exists exactly as long
//    as it is in one of them (removed on FinishedAck).
//  - Every finished job has a status file in its directory, so a restart reports it again.
//  - Launch is idempotent: a launch for a job already known (running or unacked) is ignored.
//  - Launch failures (spool write, script ownership, stepd start) become JobFinished FAILED
//    with the reason in `message`.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "noded/job_status.h"
#include "noded/spool.h"
#include "noded/stepd_control.h"
#include "tessera/v1/agent.pb.h"

namespace tessera::noded {

class JobManager {
 public:
  using LogFn = std::function<void(const std::string&)>;
  JobManager(Spool spool, StepdControl& control, const StepdProbe& probe, const Clock& clock,
             LogFn log);

  // Scans the spool after a (re)start: reattaches running jobs, reports finished ones, turns
  // lost ones (no status, no live stepd) into FAILED "tessera-stepd for job N was lost".
  Status Recover();

  void Launch(const tessera::v1::LaunchJob& launch);
  // signal 0 = cancel. Unknown or finished jobs are ignored (logged).
  void Signal(uint64_t job_id, int signal);
  // Forgets a finished job and deletes its spool directory.
  void Ack(uint64_t job_id);
  // Checks every running job for a status file or a dead stepd.
  void Poll();

  std::vector<uint64_t> Running() const;
  std::vector<tessera::v1::JobFinished> Unacked() const;
  // Messages produced since the last call (JobStarted, JobFinished), in order.
  std::vector<tessera::v1::NodeMessage> TakeOutbox();
  bool IsRunning(uint64_t id) const { return running_.count(id) > 0; }
  bool IsFinished(uint64_t id) const { return finished_.count(id) > 0; }

 private:
  Status PrepareJobDir(const tessera::v1::LaunchJob& launch);
  void Finish(uint64_t id, const JobStatus& status);
  // Writes a FAILED status file (so the end survives a restart) and finishes the job.
  void Fail(uint64_t id, const std::string& message);

  Spool spool_;
  StepdControl& control_;
  const StepdProbe& probe_;
  const Clock& clock_;
  LogFn log_;
  std::map<uint64_t, pid_t> running_;
  std::map<uint64_t, JobStatus> finished_;
  std::vector<tessera::v1::NodeMessage> outbox_;
};

tessera::v1::JobFinished ToJobFinished(uint64_t id, const JobStatus& s);

}  // namespace tessera::noded
