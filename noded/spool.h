#pragma once
// The node's spool directory (ClusterConfig::SpoolDirFor(node), mode 0755) and its layout:
//
//   <spool>/noded.sock            datagram socket: stepd sends "<job id>" when a job ended
//   <spool>/job.<id>/             one directory per job noded knows (running or unacked)
//       launch.pb                 the serialized tessera.v1.LaunchJob (written by noded)
//       script                    the batch script (owner: the job's uid, mode 0700)
//       stepd.pid                 "<pid> <start time>" of the detached tessera-stepd (written by
//                                 stepd; start time = field 22 of /proc/<pid>/stat; older
//                                 stepds wrote the pid alone)
//       stepd.log                 an exec'd stepd's diagnostics (one forked by the zygote logs to
//                                 the zygote's stderr, i.e. noded's log)
//       isolation                 the job's isolation plan (noded)
//       status                    written atomically by stepd (or noded) when the job ended
//       *.tmp                     the inodes of a reused directory's files (see below)
//   <spool>/free.<n>/             a finished job's directory kept for reuse
//
// A job directory is given up only when ctld acknowledged the job's JobFinished. It is then
// renamed to free.<n> (at most kMaxFreeDirs; more are deleted), and the next job renames one
// back to job.<id> with its atomically written files (isolation, stepd.pid, status) renamed to
// <file>.tmp, whose inodes WriteFileAtomic reuses, and its launch.pb rewritten in place before
// the stepd that reads it starts: a job creates no inodes here, and truncates nothing to zero. Per-job create/delete churn was
// ~40% of the machine's CPU under a stream of short jobs on an ext4 without a journal, where
// creating an inode scans the recently deleted ones. The script's inode is reused only for a job
// of the same user (a directory whose script is that user's is preferred); for another user it
// is removed and made anew: a process of an earlier job that still holds it open must not see
// another user's script.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "noded/job_status.h"

namespace tessera::noded {

class Spool {
 public:
  explicit Spool(std::string root) : root_(std::move(root)) {}
  const std::string& root() const { return root_; }
  std::string NotifySocket() const { return root_ + "/noded.sock"; }
  std::string JobDir(uint64_t id) const { return root_ + "/job." + std::to_string(id); }
  std::string LaunchFile(uint64_t id) const { return JobDir(id) + "/launch.pb"; }
  std::string ScriptFile(uint64_t id) const { return JobDir(id) + "/script"; }
  std::string PidFile(uint64_t id) const { return JobDir(id) + "/stepd.pid"; }
  std::string StatusFile(uint64_t id) const { return JobDir(id) + "/status"; }

  static constexpr size_t kMaxFreeDirs = 64;

  // Creates the root (and parents) with mode 0755 and takes up the free.<n> directories found.
  Status Init();
  // Ids of all job.<id> directories, ascending. Other entries are ignored.
  Result<std::vector<uint64_t>> ListJobs() const;
  static constexpr uint32_t kNoUser = ~0u;
  // Makes job.<id> (0755) for a job of user `uid` from a free directory (preferably one whose
  // script is `uid`'s; launch.pb, isolation, stepd.pid and status renamed to .tmp, stepd.log
  // emptied, a script of another user removed) or anew. kAlreadyExists when it exists.
  Status CreateJobDir(uint64_t id, uint32_t uid = kNoUser);
  // Gives job.<id> up: kept as a free directory (with its script) or deleted.
  Status RemoveJobDir(uint64_t id);
  size_t FreeDirs() const { return free_.size(); }
  // The pid in stepd.pid, or 0 when absent or malformed.
  pid_t ReadPid(uint64_t id) const;

 private:
  std::string root_;
  struct FreeDir {
    std::string path;
    uint32_t script_uid;  // owner of its script; kNoUser when it has none
  };
  std::vector<FreeDir> free_;
  uint64_t next_free_ = 0;
};

// Start time (clock ticks since boot, field 22 of /proc/<pid>/stat) of a live, non-zombie
// process; an error when there is none.
Result<uint64_t> ProcessStartTime(pid_t pid);

// Says whether `pid` is a live tessera-stepd serving job directory `job_dir`.
class StepdProbe {
 public:
  virtual ~StepdProbe() = default;
  virtual bool IsStepdAlive(pid_t pid, const std::string& job_dir) const = 0;
};

// When `job_dir`/stepd.pid records a start time for `pid`: the process exists, is no zombie and
// started at that time (/proc/<pid>/stat) -- a stepd forked by the stepd zygote shares the
// zygote's command line, and a reused pid has another start time. Otherwise (a pid file without
// a start time): /proc/<pid>/cmdline: argv[0]'s basename is tessera-stepd and one argument is
// `job_dir`.
class ProcStepdProbe final : public StepdProbe {
 public:
  bool IsStepdAlive(pid_t pid, const std::string& job_dir) const override;
};

// What a job directory found in the spool means.
struct SpoolScan {
  std::vector<uint64_t> running;              // stepd alive, no status yet
  std::map<uint64_t, JobStatus> finished;     // status file present
  std::vector<uint64_t> lost;                 // neither: stepd died without a status
};

// Classifies one job: status file -> finished; else live stepd -> running; else lost.
// The status file is read again after a dead pid is seen, so a stepd that wrote its status and
// exited between the two checks is not mistaken for lost. An unreadable status file counts as
// finished FAILED with the parse error as message.
enum class JobDirState { kRunning, kFinished, kLost };
JobDirState ClassifyJob(const Spool& spool, const StepdProbe& probe, uint64_t id,
                        JobStatus* status);
Result<SpoolScan> ScanSpool(const Spool& spool, const StepdProbe& probe);

}  // namespace tessera::noded
