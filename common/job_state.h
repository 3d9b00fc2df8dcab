#pragma once
// Job states with Slurm's names and short codes. Values match tessera.v1.JobState.
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

enum class JobState : int {
  kUnspecified = 0,
  kPending = 1,
  kRunning = 2,
  kSuspended = 3,
  kCompleting = 4,
  kCompleted = 5,
  kCancelled = 6,
  kFailed = 7,
  kTimeout = 8,
  kNodeFail = 9,
  kPreempted = 10,
  kOutOfMemory = 11,
  kBootFail = 12,
  kDeadline = 13,
  kRequeued = 220,  // an earlier run of a requeued job (tacct -D rows only; issue 16 §4)
};

// "PENDING", "RUNNING", ... as Slurm prints them.
const char* JobStateName(JobState s);
// "PD", "R", "CG", "CD", "CA", "F", "TO", "NF", "PR", "OOM", "S", "BF", "DL", "RQ".
const char* JobStateCode(JobState s);
// True for states a job never leaves (completed, failed, cancelled, ...).
bool IsFinished(JobState s);
// Accepts names and short codes, case-insensitive ("pd", "Running", "CD").
std::optional<JobState> ParseJobState(std::string_view s);

}  // namespace tessera
