#pragma once
// The per-job status file that tessera-stepd writes when a job ends (and that noded writes
// itself when a launch fails or a stepd is lost). Its presence means "the job has finished".
//
// Format: one `key=value` per line, keys state, exit_code, exit_signal, end_time, message
// (state is the Slurm name, e.g. COMPLETED; message has newlines replaced by spaces).
// Unknown keys are ignored (forward compatible); a missing or unknown state is an error.
// Written in place (WriteFileInPlace: job directories are reused, see spool.h) in one write(),
// so a reader sees an empty file or a complete one; an empty file reads as no file.
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

// Atomically replaces `path` with `contents` (mode 0644): readers see the old or the new file,
// never a partial one, whatever process dies when.
Status WriteFileAtomic(const std::string& path, const std::string& contents,
                       Durability durability = Durability::kPowerLoss);
// Replaces the contents of `path` (created with `mode` when missing; the mode is set either
// way; a symlink is refused) keeping its inode: truncate, then one write() when the contents fit
// in a page. A concurrent reader of such a small file sees it empty or complete (the size grows
// only after the copy), and a writer killed in between leaves it empty, so readers must treat
// an empty file as absent. For spool files only a process crash matters (see Durability).
Status WriteFileInPlace(const std::string& path, const std::string& contents, mode_t mode);
// The job's status file, in place.
Status WriteStatusFile(const std::string& path, const JobStatus& s);
// kNotFound when the file does not exist or is empty.
Result<JobStatus> ReadStatusFile(const std::string& path);

}  // namespace tessera::noded
