#pragma once
// GPU sharing in the scheduler (issue 14 §3; Slurm's gres/mps and gres/shard).
//
// A job asking for `mps:N` (percent of one GPU's MPS server) or `shard:N` (time-slice replicas
// of one GPU) takes that amount from the share pool of ONE GPU per node (NodeSnap::gpu_shares).
// Rules, checked now and within one cycle:
//  - a pool can give shares only when its GPU is healthy and either already shared in the same
//    mode or free whole (in NodeRt::free_gpus); a GPU held whole offers no shares;
//  - the first share taken from a GPU takes the GPU out of free_gpus (it is no longer free
//    whole) and out of the timeline's GPU count until that job's end; the last share given back
//    (a discarded statement) puts it back;
//  - one GPU shares in one mode at a time: MPS or shards, never both;
//  - when the job names a GPU type (mps:a100:50, Req::share_model), only GPUs of that model
//    serve it (ShareModel); submit refuses a type no GPU of the partition shares that way.
// Placement picks GPUs already shared first (best fit), then whole free GPUs (lowest index), so
// whole GPUs stay free for whole-GPU jobs. Shares are not on the timeline: a backfill
// reservation of a share job is checked against the pools only at `now`; later start times look
// at CPUs, memory and the GPU counts (a shared GPU returns at its last job's end).
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sched {

struct NodeRt;

// One GPU's share pool during a cycle.
struct GpuShareRt {
  uint32_t pos = 0;    // position of the whole GPU in NodeSnap::gpus
  uint32_t index = 0;  // the node's GPU index
  uint32_t mps_total = 0, mps_used = 0;
  uint32_t shards_total = 0, shards_used = 0;
  bool InUse() const { return mps_used > 0 || shards_used > 0; }
};

struct ShareAmount {
  uint32_t mps = 0;
  uint32_t shards = 0;
  bool Any() const { return mps > 0 || shards > 0; }
};

// The pools of `ns` (only GPUs listed whole in ns.gpus; others are ignored).
std::vector<GpuShareRt> BuildSharePools(const NodeSnap& ns);

bool WantsShare(const GroupReq& g);
// The GPU type `g`'s shares must come from (Req::share_model of per_node, else per_task; "" =
// any GPU).
const std::string& ShareModel(const GroupReq& g);
// What `k` tasks of `g` on one node take from one GPU's pool.
ShareAmount ShareFor(const GroupReq& g, int64_t k);

// Whether pool `p` of `n` can give `a` now (rules above); `model` "" = any type.
bool PoolFits(const NodeRt& n, const GpuShareRt& p, const ShareAmount& a, const std::string& model);

// The most tasks (<= limit) of `g` that one GPU of `n` can serve now (0 = none). `fixed` >= 0:
// only that GPU index (the job already shares it on this node: one shared GPU per node).
int64_t ShareCapacity(const NodeRt& n, const GroupReq& g, const std::string& model, int64_t limit,
                      int64_t fixed);

// The pool (position in n.shares) to take `a` from, or -1. `fixed` >= 0: only that GPU index.
int PickSharePool(const NodeRt& n, const ShareAmount& a, const std::string& model, int64_t fixed);

// Busy vs never for share requests (CheckSatisfiable): mps and shard in one job, or either
// with whole GPUs, are refused; so is a task's share that no GPU of `cands` could ever hold.
Status CheckShareRequest(const JobSnap& job, const std::vector<const NodeSnap*>& cands);

}  // namespace tessera::sched
