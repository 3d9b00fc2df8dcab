#pragma once
// Issue 19 ("around jobs", "output that scripts parse"): what the commands share to behave as
// Slurm's do when called by their Slurm names, and job references with array elements.
//
// Job references (squeue -j, scontrol show job|hold|release|update, sacct -j): "1234" (a job,
// or every element of the array 1234), "1234_7" (element 7 of array 1234, or the pending
// remainder holding index 7). A reference matches a record as squeue's _filter_job does.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/lib/controller_api.h"
#include "common/status.h"
#include "tessera/v1/types.pb.h"

namespace tessera::cli {

struct JobRef {
  uint64_t id = 0;
  std::optional<uint32_t> task;  // set for "1234_7"
  std::string text;              // as the user wrote it
};

// "12,13_4,14": errors name the piece: invalid job id "x".
Result<std::vector<JobRef>> ParseJobRefList(std::string_view s);

// True when `job` is the job `ref` names: its id or its array's id (no task); the element with
// that index, or the pending remainder that still holds it (with a task).
bool JobRefMatches(const JobRef& ref, const tessera::v1::JobInfo& job);

// A pending remainder ("5-15%4") matched by task references is narrowed to the named indices,
// as squeue does: one index becomes that element ("1230_7"), several stay a remainder.
void NarrowRemainder(const std::vector<JobRef>& refs, tessera::v1::JobInfo& job);

// The ids to ask the controller for (each reference's job or array id, once).
std::vector<uint64_t> RefIds(const std::vector<JobRef>& refs);

// The controller's job ids that `refs` stand for, for scontrol hold|release|update|requeue|
// suspend|resume: "1234_7" is that element's own id; "1234" of an array is each of its elements
// not yet finished (each element is a job of its own in the controller; all of them when every
// one has finished), else 1234 itself. Errors: Invalid job id specified (with the reference).
Result<std::vector<uint64_t>> ResolveJobRefs(ControllerApi& api, const std::vector<JobRef>& refs);

// The records `refs` name as squeue and scontrol show them (an array's pending remainder as
// one record, narrowed to the indices asked), finished jobs included, in job id order. An
// empty result means the controller knows none of them.
Result<std::vector<tessera::v1::JobInfo>> ListJobRefs(ControllerApi& api,
                                                      const std::vector<JobRef>& refs);

// The job's reason as slurmctld sets it: the stored one, or for a job that ended without one
// the cause Slurm names: FAILED with an exit code "NonZeroExitCode", by a signal
// "JobLaunchFailure", TIMEOUT "TimeLimit", OUT_OF_MEMORY "OutOfMemory", NODE_FAIL "NodeDown";
// else "None".
std::string SlurmReason(const tessera::v1::JobInfo& job);

// True when the command runs under a Slurm name (squeue, scancel, sbatch, sinfo, scontrol,
// sacct, srun, salloc): then messages and exit codes follow Slurm's where Tessera's documented
// behaviour differs (cli/README.md, "Compatibility names").
bool IsSlurmName(const std::string& prog);

}  // namespace tessera::cli
