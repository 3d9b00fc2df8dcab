#pragma once
// The per-job status file that tessera-stepd writes when a job ends (and that noded writes
// itself when a launch fails or a stepd is lost). Its presence means "the job has finished".
//
// Format: one `key=value` per line, keys state, exit_code, exit_signal, end_time, message, usage
// (state is the Slurm name, e.g. COMPLETED; message has newlines replaced by spaces).
// Unknown keys are ignored (forward compatible); a missing or unknown state is an error.
// Writes are atomic (WriteFileAtomic), so a reader sees either no file or a complete one.
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/job_state.h"
#include "common/status.h"

namespace tessera::noded {

struct JobStatus {
  JobState state = JobState::kFailed;
  int32_t exit_code = 0;
  int32_t exit_signal = 0;
  int64_t end_time = 0;
  std::string message;
  // Issue 19 (h19): the batch script's usage (task_usage.h FormatUsageText: numbers); "" none.
  std::string usage;

  bool operator==(const JobStatus&) const = default;
};

std::string FormatJobStatus(const JobStatus& s);
// `where` names the source in error messages (a path).
Result<JobStatus> ParseJobStatus(const std::string& text, const std::string& where);

// Whether WriteFileAtomic also forces the data to disk (fsync of the file and its directory).
// The job spool only has to survive the death of noded or stepd (the page cache keeps it), not
// of the kernel: a node that crashes loses its jobs anyway and ctld's durable state decides
// (NODE_FAIL / requeue), so spool files use kProcessCrash and a launch does not wait for disk.
enum class Durability { kProcessCrash, kPowerLoss };

// Atomically replaces `path` with `contents` (mode `mode`): readers see the old or the new file,
// never a partial one, whatever process dies when. Writes `path`.tmp and renames it; an existing
// `path`.tmp (a symlink is refused) is overwritten in place rather than truncated to zero, so a
// spool that renamed its files to .tmp for reuse (spool.h) allocates no inode and no block here,
// and ext4 starts no writeback at close (it does after a truncation to zero).
Status WriteFileAtomic(const std::string& path, const std::string& contents,
                       Durability durability = Durability::kPowerLoss, mode_t mode = 0644);
// Rewrites `path` in place (created when absent, a symlink refused): its inode is overwritten and
// cut to size, never truncated to zero first. Not atomic: for files nobody reads while they are
// written (a job's launch.pb, read by the stepd started after it).
Status WriteFileInPlace(const std::string& path, const std::string& contents, mode_t mode = 0644);
// The job's status file (spool: Durability::kProcessCrash).
Status WriteStatusFile(const std::string& path, const JobStatus& s);
// kNotFound when the file does not exist or is empty.
Result<JobStatus> ReadStatusFile(const std::string& path);

}  // namespace tessera::noded
