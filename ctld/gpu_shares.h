#pragma once
// GPU sharing in the controller (issue 14 §3): the seam between live node state and the
// scheduler's share pools (ctld/sched/gpu_share.h).
//
// Pools: a GPU offers its gres/mps count when its node reports it with MPS: 100 with gres.conf
// Mps=yes, the count of Slurm's `Name=mps Count=` lines (spread over the GPUs, or per File=;
// common/gres_shares.h) otherwise; a job's mps:N of a GPU with count C runs with
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE N x 100 / C (NodeAlloc::mps_percent). It offers
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
// the admin's choice; simulated GPUs report what gres.conf said). Counts from Name=mps /
// Name=shard lines (GpuDecl::mps_counts / shard_counts) always win: only gres.conf knows them.
void ApplyConfiguredShares(std::vector<GpuState>& gpus, const std::vector<GpuDecl>& decls);
// The GPU's gres/mps count: 0 without MPS, else mps_count (100 when not set).
uint32_t MpsTotal(const GpuState& g);
// Slurm's CUDA_MPS_ACTIVE_THREAD_PERCENTAGE for `mps` of a GPU whose count is `total`:
// mps x 100 / total, at least 1 and at most 100; 0 when either is 0.
uint32_t MpsPercent(uint32_t mps, uint32_t total);
// Sets a.mps_percent from the count of its shared GPU on the live node `n` (left 0 when the
// count is the default 100: the percent is then mps itself).
void SetMpsPercent(NodeAlloc& a, const NodeRuntime* n);
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
