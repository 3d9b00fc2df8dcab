#pragma once
// tessera-stepd's core: runs one batch job to its end and says how it ended.
//
// The job process (vfork + exec; everything it needs is prepared before the vfork): its own
// session and process group; the submitter's supplementary groups (getgrouplist), gid and uid
// (switched only when stepd runs as root; otherwise only the own uid is allowed); stdout/stderr files opened AFTER dropping privileges (so they are created with
// the user's ownership and permissions, truncated, mode 0644 minus umask; stderr "" = the stdout
// file); stdin /dev/null; chdir(workdir) (failure: an error line in the job's stderr, job FAILED);
// the environment from BuildJobEnv; execve of the script (via /bin/sh when it has no #! line) or
// of argv (PATH search with the job's PATH).
//
// Supervision (signals arrive through a signalfd):
//   time limit (time_limit_s > 0): SIGTERM to the process group, KillWait later SIGKILL -> TIMEOUT
//   SIGTERM to stepd (cancel):     the same escalation -> CANCELLED
//   SIGUSR1 naming signal N:       signal N forwarded to the process group; the job goes on
// Both are queued with a value naming their job (stepd_signal.h); one naming another job (one
// this stepd ran before) is logged and dropped.
// When the job's main process ends, what is left of its process group is SIGKILLed.
// Isolation (opts.isolation with a cgroup_root): stepd creates the job's cgroup before the fork
// (failure: job FAILED), the child joins it before dropping privileges, every cancel/timeout
// SIGTERM also goes to each process of the cgroup and the SIGKILL phase (and the end of the
// main process) kills everything in the cgroup, so setsid() escapees die too. An OOM kill in
// the cgroup makes the job OUT_OF_MEMORY (unless it was already CANCELLED or TIMEOUT). The
// cgroup is removed when the job is over.
// End states: exit 0 -> COMPLETED; non-zero exit or death by signal -> FAILED; TIMEOUT and
// CANCELLED as above whatever the exit status; setup failures -> FAILED with a message.
#include <string>

#include "noded/job_env.h"
#include "noded/job_isolation.h"
#include "noded/job_status.h"
#include "noded/job_user.h"
#include "tessera/v1/agent.pb.h"

namespace tessera::noded {

struct JobRunOptions {
  NodeFacts node;
  std::string script_path;   // <job dir>/script (used when the LaunchJob has a script)
  // Called with progress lines (stepd logs them: stepd.log, or noded's log when forked by the
  // zygote).
  void (*log)(const std::string&) = nullptr;
  const JobIsolation* isolation = nullptr;  // cgroup + HCAs; nullptr = none
  // The submitter, looked up for this uid and gid (with the groups when stepd is root);
  // nullptr = RunJob looks it up.
  const JobUser* user = nullptr;
};

// Blocks until the job has ended. Must be called after BlockJobSignals, from a single-threaded
// process.
JobStatus RunJob(const tessera::v1::LaunchJob& launch, const JobRunOptions& opts);

// Blocks the signals RunJob handles through its signalfd and sets every signal's disposition to
// the default, which the jobs then inherit (stepd calls it first thing).
void BlockJobSignals();

}  // namespace tessera::noded
