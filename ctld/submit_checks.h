#pragma once
// Input checks of job requests that need no cluster configuration (the hardening issue, part 5):
//  - a negative nice is for operators and administrators only, at submit and update alike;
//  - text other users see (name, comment, account, paths, ...) holds no control characters
//    (common/control_chars.h): the error names the field and the position;
//  - times lie within a sane range and the environment fits exec (common/input_limits.h);
//  - a dependency names only jobs the controller knows (Slurm's "Job dependency problem").
// Pure functions: the caller passes the clock's `now` and a lookup of known job ids.
#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "ctld/jobs/job.h"
#include "ctld/jobs/job_codec.h"
#include "ctld/jobs/job_manager.h"

namespace tessera::ctld {

// Slurm's nice range (NICE_OFFSET - 3).
inline constexpr int64_t kMaxNice = 2147483645;

// Request fields the JobSpec model does not keep.
struct RequestExtras {
  int64_t deadline = 0;
  int64_t time_min_s = 0;
};

// Everything above but dependencies, for a submission by `caller` at `now`.
Status CheckSubmitInput(const JobSpec& spec, const RequestExtras& extras, const Caller& caller,
                        int64_t now);

// The same rules for a field update (nice, comment, time limit).
Status CheckUpdateInput(const JobUpdate& u, const Caller& caller);

// kInvalidArgument "Job dependency problem: ..." when `dependency` names a job id for which
// `known(id)` is false (never issued, or finished and purged from memory). A dependency that does
// not parse passes here: the scheduler's submit check reports it.
Status CheckDependencyTargets(const std::string& dependency,
                              const std::function<bool(uint64_t)>& known);

}  // namespace tessera::ctld
