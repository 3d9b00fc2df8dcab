#pragma once
// Task layout of a job step (trun) over the job's allocation, as srun's block distribution:
// ranks 0..n-1 fill the first node up to its share, then the next, and so on.
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ctld/jobs/job.h"

namespace tessera::ctld {

struct StepRequest {
  uint32_t ntasks = 0;           // 0 = nodes x ntasks_per_node, else the job's own task count
  uint32_t ntasks_per_node = 0;  // 0 = the job's per-node task counts (or an even spread)
  uint32_t nodes = 0;            // 0 = all of the job's nodes (or as many as needed)
  uint32_t cpus_per_task = 0;    // 0 = 1
  // gpunode (issue 14): the step's own GPUs (step_gpus.h); all 0 = the job's GPUs, none held.
  uint32_t gpus_per_node = 0, gpus = 0, gpus_per_task = 0;
  std::string gpu_type;
  // Issue 19 (srun -w/-x): the step's nodes in this order, each one of the job's (else
  // "Requested node configuration is not available"); empty = the job's first `nodes`.
  std::vector<std::string> node_names;
};

struct StepPlacement {
  std::string node;
  std::vector<uint32_t> ranks;
};

// Errors name what does not fit (more nodes than the job has, more CPUs than allocated).
Result<std::vector<StepPlacement>> LayoutStep(const JobRecord& job, const StepRequest& req);

// The job's allocation on `node` (its own GPU indices, CPUs, memory): what the step grant sent
// to that node carries. kFailedPrecondition naming the job and node when the job has none there.
Result<NodeAlloc> StepNodeAlloc(const JobRecord& job, const std::string& node);

}  // namespace tessera::ctld
