#pragma once
// GPU sharing in the controller (issue 14 §3): the seam between live node state and the
// scheduler's share pools (ctld/sched/gpu_share.h).
//
// Pools: a GPU offers 100 MPS percent when its node reports it with MPS (gres.conf Mps=yes) and
// `replicas` shards when it reports Replicas=N; NodeRuntime::alloc_mps / alloc_shards hold what
// running jobs use (NodeTable::Allocate/Release keep them; a shared GPU is never in
// alloc_gpus). A GPU with shares in use is not free whole; a GPU held whole offers no shares;
// a GPU shares in one mode (MPS or shards) at a time.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "common/cluster_config.h"
#include "common/status.h"
#include "ctld/jobs/job.h"
#include "ctld/nodes/node_table.h"
#include "ctld/sched/decision.h"
#include "ctld/sched/snapshot.h"

namespace tessera::ctld {

inline constexpr uint32_t kMpsPerGpu = 100;  // Slurm's default gres/mps count per GPU

// gres.conf Mps=/Replicas= of the GPU lines naming the node (declaration order = GPU index) for
// the reported GPUs that report no sharing of their own (NVML GPUs: the driver does not know
// the admin's choice; simulated GPUs report what gres.conf said).
void ApplyConfiguredShares(std::vector<GpuState>& gpus, const std::vector<GpuDecl>& decls);
// Share pools of the node's reported GPUs with what running jobs use; GPUs with shares in use
// are marked not free whole in ns.gpus.
void FillSharePools(sched::NodeSnap& ns, const NodeRuntime& rt);
// Share pools from gres.conf (every GPU idle), for the configured cluster (submit checks).
void FillConfigSharePools(sched::NodeSnap& ns, const std::vector<GpuDecl>& decls);
// Running share jobs release their shared GPU on the timeline once: the one of the jobs sharing
// a GPU that ends last carries the GPU in its NodeUse (the others carry none).
// `shared`: (position in running, record) of each running job with a share allocation.
void AddShareReleases(std::vector<sched::RunningSnap>& running,
                      const std::vector<std::pair<size_t, const JobRecord*>>& shared);
// Whether `p`'s shares (and whole GPUs) still fit the live node `n`.
bool SharesStillFit(const sched::NodePlacement& p, const NodeRuntime& n);
// The shared GPU's use by the allocation `a` on its node (NodeTable bookkeeping).
void ApplyShareUse(const NodeAlloc& a, NodeRuntime& n, bool add);
bool IsShareAlloc(const NodeAlloc& a);

}  // namespace tessera::ctld
