#include "common/job_state.h"

#include <cctype>

namespace tessera {
namespace {
struct Entry {
  JobState state;
  const char* name;
  const char* code;
};
constexpr Entry kEntries[] = {
    {JobState::kPending, "PENDING", "PD"},     {JobState::kRunning, "RUNNING", "R"},
    {JobState::kSuspended, "SUSPENDED", "S"},  {JobState::kCompleting, "COMPLETING", "CG"},
    {JobState::kCompleted, "COMPLETED", "CD"}, {JobState::kCancelled, "CANCELLED", "CA"},
    {JobState::kFailed, "FAILED", "F"},        {JobState::kTimeout, "TIMEOUT", "TO"},
    {JobState::kNodeFail, "NODE_FAIL", "NF"},  {JobState::kPreempted, "PREEMPTED", "PR"},
    {JobState::kOutOfMemory, "OUT_OF_MEMORY", "OOM"}, {JobState::kBootFail, "BOOT_FAIL", "BF"},
    {JobState::kDeadline, "DEADLINE", "DL"},   {JobState::kRequeued, "REQUEUED", "RQ"},
};

bool IEq(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) != static_cast<unsigned char>(b[i])) return false;
  return true;
}
}  // namespace

const char* JobStateName(JobState s) {
  for (const auto& e : kEntries)
    if (e.state == s) return e.name;
  return "UNKNOWN";
}

const char* JobStateCode(JobState s) {
  for (const auto& e : kEntries)
    if (e.state == s) return e.code;
  return "?";
}

bool IsFinished(JobState s) {
  switch (s) {
    case JobState::kPending:
    case JobState::kRunning:
    case JobState::kSuspended:
    case JobState::kCompleting:
    case JobState::kUnspecified:
      return false;
    default:
      return true;
  }
}

std::optional<JobState> ParseJobState(std::string_view s) {
  for (const auto& e : kEntries)
    if (IEq(s, e.name) || IEq(s, e.code)) return e.state;
  if (IEq(s, "CANCELED")) return JobState::kCancelled;
  return std::nullopt;
}

}  // namespace tessera
