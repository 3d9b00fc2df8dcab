#pragma once
// GPU failures under running jobs (issue 14 §4). When a node reports a GPU failed (an XID the
// node does not ignore, GpuIgnoredXids; or a lost device), every running job holding that GPU
// (whole, shared through MPS/shards, or one of its MIG instances) gets its partition's
// GpuFailurePolicy (common/cluster_config.h):
//  - requeue (default): a durable gpu_failure + requeue_requested event, then every node of the
//    job is told to stop it (its batch step and its trun steps: never half a gang running);
//    when the batch node reports the end the job is requeued with the failure as its reason
//    (the scheduler's reason replaces it at the next cycle; the event stays). A batch node that
//    is not connected: requeued at once (it kills the run when it registers).
//  - fail: a durable gpu_failure event, every node told to stop it; the job ends FAILED with
//    the failure as its reason ("GPU 1 of node n2 failed: XID 79 ...").
//  - ignore: the gpu_failure event only; the job runs on.
// The GPU is drained in every case (OnGpuUpdate). Each job gets one log line naming node, GPU,
// XID and job. The event is shown by `tcontrol show job ID --events`.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ctld/jobs/job.h"
#include "ctld/nodes/node_table.h"

namespace tessera::ctld {

// Running jobs of `jobs` whose allocation on `node` holds GPU `gpu` whole or shared, or one of
// the MIG instances `mig_uuids` (the GPU's instances). Pure.
std::vector<uint64_t> JobsHoldingGpu(const std::vector<const JobRecord*>& jobs,
                                     const std::string& node, uint32_t gpu,
                                     const std::vector<std::string>& mig_uuids);

// Failures reported at registration (issue 14, gpunode): a noded that comes back (its restart,
// ctld's restart, a broken stream) reports each GPU's health in Register. A GPU it reports
// unhealthy for a failure (reason "XID <n>..." or "GPU lost...", as noded's GpuManager writes
// them) that ctld has no drain for is a failure ctld missed; a GPU ctld knew (`before`, the
// node's GPUs before this registration) that the node no longer reports is lost. Both get the
// policy above (OnGpuFailure) once the registration's jobs are reconciled, exactly as a
// GpuHealth under a running job would; GPUs ctld already drained (its own, an admin's, or a
// failure it handled) do not. `drained(i)`: ctld has a drain for GPU i. Pure.
std::vector<GpuState> RegisteredGpuFailures(const std::vector<GpuState>& before,
                                            const std::vector<GpuState>& now,
                                            const std::function<bool(uint32_t)>& drained);
// The XID of a health reason "XID 79: ..." (0 when the reason names none).
uint32_t XidOfReason(const std::string& reason);

// "GPU 1 of node n2 failed: XID 79: GPU has fallen off the bus" (xid 0: the node's reason).
std::string GpuFailureMessage(const std::string& node, uint32_t gpu, uint32_t xid,
                              const std::string& reason);
// The gpu_failure event detail (JSON).
std::string GpuFailureDetail(const std::string& node, uint32_t gpu, uint32_t xid,
                             const std::string& reason, const std::string& policy);

}  // namespace tessera::ctld
