#pragma once
// A job allocation made by a command rather than by a batch script (issue 19): trun (srun)
// outside a job and talloc (salloc). The allocation is a job whose batch step only holds it
// (a shell waiting for SIGUSR2: kAllocationHolder); its output goes to /dev/null. It is
// released by sending that signal to the batch shell, which then exits 0: the job ends
// COMPLETED, as a Slurm allocation does when srun/salloc exits. A command killed before it
// releases leaves the job running until its time limit or `tcancel`.
//
// Messages follow srun's and salloc's:
//   srun: job N queued and waiting for resources / srun: job N has been allocated resources
//   (srun's only when the job did not start within 3 s)
//   salloc: Pending job allocation N / salloc: job N queued and waiting for resources /
//   salloc: Granted job allocation N / salloc: Nodes LIST are ready for job /
//   salloc: Relinquishing job allocation N
#include <cstdint>
#include <map>
#include <string>

#include "cli/lib/batch_options.h"
#include "cli/lib/command.h"

namespace tessera::cli {

extern const char kAllocationHolder[];

enum class AllocStyle { kSrun, kSalloc };

// Submits the allocation for `opts` (the job name should be set) and waits until it runs:
// GetJob every 100 ms for the first 3 s (quietly), then every second through ctx.sleep. Errors: the submission's, a job that ended
// before it ran, or ctx.sleep returning false (interrupted: the job is cancelled).
Result<pb::JobInfo> CreateAllocation(CommandContext& ctx, ControllerApi& api,
                                     const BatchOptions& opts, AllocStyle style);

// Ends the allocation (SIGUSR2 to its batch shell; a plain cancel when that fails).
void ReleaseAllocation(CommandContext& ctx, ControllerApi& api, uint64_t job_id,
                       AllocStyle style);

// The SLURM_* variables of an allocation, as salloc sets them for its command and srun for its
// tasks: SLURM_JOB_ID/JOBID, SLURM_JOB_NAME, SLURM_JOB_NODELIST/NODELIST,
// SLURM_JOB_NUM_NODES/NNODES, SLURM_NTASKS/NPROCS, SLURM_JOB_CPUS_PER_NODE,
// SLURM_TASKS_PER_NODE, SLURM_JOB_PARTITION, SLURM_JOB_ACCOUNT, SLURM_JOB_QOS,
// SLURM_SUBMIT_DIR, SLURM_MEM_PER_NODE (when set), plus the options' own (batch_env.h).
std::map<std::string, std::string> AllocationEnv(const pb::JobInfo& job, const BatchOptions& opts,
                                                 const std::string& cwd);

}  // namespace tessera::cli
