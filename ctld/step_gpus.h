#pragma once
// The GPUs of a job step (trun --gres=gpu[:type]:N, --gpus-per-node=N, --gpus=N,
// --gpus-per-task=N; issue 14, gpunode): a part of the job's GPUs on each node of the step, as
// Slurm's srun gives a step its own GRES inside the job's allocation.
//
// Rules (Slurm's srun semantics):
//  - per node: --gres=gpu:N / --gpus-per-node=N take N on each node of the step; --gpus-per-task=N
//    takes N x the step's tasks there; --gpus=N spreads N over the step's nodes in order (the
//    first nodes take one more when N does not divide evenly).
//  - a step only ever gets GPUs of its job on that node (whole GPUs, or MIG instances; a typed
//    request only whole GPUs of that model), never GPUs outside the job;
//  - GPUs of running steps that asked GPUs are held: two such steps never share one. A step
//    that asks no GPUs sees all of the job's GPUs and holds none (as before).
//  - more GPUs than the job has on a node (of that type): kInvalidArgument naming the node, the
//    request and what the job has; the job has enough but running steps hold them:
//    kResourceExhausted "Requested nodes are busy" (Slurm's words; trun waits and retries, as
//    srun does: "step creation temporarily disabled, retrying").
// Pure (no I/O); the controller keeps what running steps hold.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "ctld/jobs/job.h"
#include "ctld/step_layout.h"

namespace tessera::ctld {

struct StepGpuRequest {
  uint32_t per_node = 0;  // --gres=gpu:N, --gpus-per-node=N
  uint32_t total = 0;     // --gpus=N
  uint32_t per_task = 0;  // --gpus-per-task=N
  std::string type;       // "" = any of the job's GPUs
  bool Any() const { return per_node + total + per_task > 0; }
};

// One node's GPUs of a step: whole GPUs (node-local indices) and MIG instances.
struct StepGpus {
  std::vector<uint32_t> gpus;
  std::vector<std::string> migs;
  size_t size() const { return gpus.size() + migs.size(); }
};

// Running steps' GPUs: node -> what they hold.
using HeldStepGpus = std::map<std::string, StepGpus>;

// The model of GPU `gpu` of `node` (for typed requests; "" when unknown).
using GpuModelFn = std::function<std::string(const std::string& node, uint32_t gpu)>;

// The GPUs of each node of `layout` (same order) for `req` (req.Any()), out of `job`'s
// allocation minus `held`. Errors as above; nothing is chosen on error.
Result<std::vector<StepGpus>> PickStepGpus(const JobRecord& job,
                                           const std::vector<StepPlacement>& layout,
                                           const StepGpuRequest& req, const HeldStepGpus& held,
                                           const GpuModelFn& model_of);

// How many GPUs the step wants on the node at position `node_pos` of its `nodes`, which runs
// `ranks` of its tasks.
uint32_t StepGpusWanted(const StepGpuRequest& req, size_t node_pos, size_t nodes, size_t ranks);

}  // namespace tessera::ctld
