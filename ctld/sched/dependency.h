#pragma once
// Slurm --dependency strings and their evaluation over known job states.
//   after:ID[:ID...]       the jobs have started (or ended)
//   afterok:ID...          the jobs completed with exit code 0
//   afternotok:ID...       the jobs ended otherwise (failed, cancelled, timed out, node fail)
//   afterany:ID...         the jobs ended, however
//   singleton              no other job of the same user and name is running
// Items joined with ',' must all hold; items joined with '?' need any one (no mixing).
// A job id nobody knows any more is treated as satisfied (Slurm drops dependencies on purged
// jobs). A dependency that can no longer hold (afterok on a failed job) is kNever.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::sched {

enum class DepType { kAfter, kAfterOk, kAfterNotOk, kAfterAny, kSingleton };

struct DepItem {
  DepType type = DepType::kAfterAny;
  uint64_t job_id = 0;  // unused for kSingleton
};

struct Dependency {
  bool any = false;  // '?' separated
  std::vector<DepItem> items;
  bool Empty() const { return items.empty(); }
  bool HasSingleton() const;
};

// State of a job a dependency refers to.
enum class DepJobState { kUnknown, kPending, kRunning, kCompletedOk, kEndedNotOk };

enum class DepOutcome { kSatisfied, kWaiting, kNever };

Result<Dependency> ParseDependency(const std::string& s);

// `state_of(id)` says where job `id` is; `singleton_free` says whether no job of the same
// user and name runs.
DepOutcome EvalDependency(const Dependency& dep,
                          const std::function<DepJobState(uint64_t)>& state_of,
                          bool singleton_free);

}  // namespace tessera::sched
