#pragma once
// Which job holds which GPU or MIG instance of a node, as ctld knows it (running jobs and
// starts not yet acknowledged alike: NodeTable::Allocate runs when the start is decided).
// Used to build the scheduler snapshot, to recheck a placement before it is applied, and to
// refuse MIG layout changes of a GPU in use. Core thread only.
#include <cstdint>
#include <string>

#include "common/status.h"
#include "ctld/jobs/job.h"
#include "ctld/nodes/node_table.h"

namespace tessera::ctld {

// Records / forgets that `job` holds the GPUs and MIG instances of `a` on `n` (then ApplyMigUse).
void HoldGpus(NodeRuntime& n, const NodeAlloc& a, uint64_t job);
void ReleaseGpus(NodeRuntime& n, const NodeAlloc& a, uint64_t job);
// Rewrites n.gpus[].mig[].in_use_by_job from n.mig_jobs (after a node report replaced n.gpus).
void ApplyMigUse(NodeRuntime& n);
// The job holding GPU `gpu` whole or any of its MIG instances, or 0.
uint64_t GpuHolder(const NodeRuntime& n, uint32_t gpu);
// The job holding MIG instance `uuid`, or 0.
uint64_t MigHolder(const NodeRuntime& n, const std::string& uuid);
// The GPU (in MIG mode) that has instance `uuid`, or nullptr.
const GpuState* GpuOfMig(const NodeRuntime& n, const std::string& uuid);

// OK when GPU `gpu` of `n` may change its MIG layout (create, destroy, MigLayout=none):
// FailedPrecondition naming the node, the GPU and the job when a job holds the GPU or one of
// its instances (running, or started and not yet acknowledged).
Status MigChangeAllowed(const NodeRuntime& n, uint32_t gpu);

}  // namespace tessera::ctld
