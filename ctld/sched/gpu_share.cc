#include "ctld/sched/gpu_share.h"

#include <algorithm>

#include "ctld/sched/cluster_state.h"

namespace tessera::sched {

std::vector<GpuShareRt> BuildSharePools(const NodeSnap& ns) {
  std::vector<GpuShareRt> out;
  for (const auto& s : ns.gpu_shares) {
    if (s.mps_total == 0 && s.shards_total == 0) continue;
    for (uint32_t i = 0; i < ns.gpus.size(); ++i) {
      const GpuSnap& g = ns.gpus[i];
      if (g.index != s.index || !g.mig_uuid.empty()) continue;
      out.push_back({i, s.index, s.mps_total, s.mps_used, s.shards_total, s.shards_used});
      break;
    }
  }
  return out;
}

bool WantsShare(const GroupReq& g) {
  return g.per_task.mps + g.per_node.mps + g.per_task.shards + g.per_node.shards > 0;
}

const std::string& ShareModel(const GroupReq& g) {
  return g.per_node.share_model.empty() ? g.per_task.share_model : g.per_node.share_model;
}

ShareAmount ShareFor(const GroupReq& g, int64_t k) {
  auto n = static_cast<uint32_t>(k);
  return {g.per_task.mps * n + g.per_node.mps, g.per_task.shards * n + g.per_node.shards};
}

bool PoolFits(const NodeRt& n, const GpuShareRt& p, const ShareAmount& a,
              const std::string& model) {
  const GpuSnap& g = n.snap->gpus[p.pos];
  if (!g.healthy || (!model.empty() && g.model != model)) return false;
  if (!p.InUse() && std::find(n.free_gpus.begin(), n.free_gpus.end(), p.pos) == n.free_gpus.end())
    return false;  // held whole
  if (a.mps > 0 && (p.shards_used > 0 || p.mps_total < p.mps_used + a.mps)) return false;
  if (a.shards > 0 && (p.mps_used > 0 || p.shards_total < p.shards_used + a.shards)) return false;
  return true;
}

int64_t ShareCapacity(const NodeRt& n, const GroupReq& g, const std::string& model, int64_t limit,
                      int64_t fixed) {
  int64_t best = 0;
  for (const auto& p : n.shares) {
    if (fixed >= 0 && p.index != fixed) continue;
    auto fits = [&](int64_t k) { return PoolFits(n, p, ShareFor(g, k), model); };
    if (!fits(1)) continue;
    if (g.per_task.mps == 0 && g.per_task.shards == 0) return limit;  // per-node amounts only
    int64_t lo = 1, hi = limit;  // largest k in [1, limit] that fits (monotone)
    while (lo < hi) {
      int64_t mid = lo + (hi - lo + 1) / 2;
      if (fits(mid)) lo = mid;
      else hi = mid - 1;
    }
    best = std::max(best, lo);
  }
  return best;
}

int PickSharePool(const NodeRt& n, const ShareAmount& a, const std::string& model, int64_t fixed) {
  int best = -1;
  int64_t best_left = 0;
  for (size_t i = 0; i < n.shares.size(); ++i) {
    const GpuShareRt& p = n.shares[i];
    if (fixed >= 0 && p.index != fixed) continue;
    if (!PoolFits(n, p, a, model)) continue;
    // Prefer GPUs already shared (keeps whole GPUs free), then the least left after the take.
    int64_t left = a.mps > 0 ? int64_t{p.mps_total} - p.mps_used - a.mps
                             : int64_t{p.shards_total} - p.shards_used - a.shards;
    left += p.InUse() ? 0 : (int64_t{1} << 40);
    if (best < 0 || left < best_left) best = static_cast<int>(i), best_left = left;
  }
  return best;
}

namespace {

// Whether GPU `index` of `n` is a whole GPU of type `model`.
bool OfModel(const NodeSnap& n, uint32_t index, const std::string& model) {
  for (const auto& g : n.gpus)
    if (g.index == index && g.mig_uuid.empty()) return g.model == model;
  return false;
}

}  // namespace

Status CheckShareRequest(const JobSnap& job, const std::vector<const NodeSnap*>& cands) {
  for (const auto& g : job.groups) {
    if (!WantsShare(g)) continue;
    ShareAmount one = ShareFor(g, 1);
    if (one.mps && one.shards)
      return InvalidArgument("gres/mps and gres/shard cannot be combined in one job");
    const char* kind = one.mps ? "gres/mps" : "gres/shard";
    if (g.per_task.gpus + g.per_node.gpus > 0)
      return InvalidArgument(std::string(kind) + " cannot be combined with whole GPUs (gres/gpu)");
    const std::string& type = ShareModel(g);
    uint32_t most = 0;
    for (const NodeSnap* n : cands)
      for (const auto& p : n->gpu_shares)
        if (type.empty() || OfModel(*n, p.index, type))
          most = std::max(most, one.mps ? p.mps_total : p.shards_total);
    uint32_t want = one.mps ? one.mps : one.shards;
    if (!type.empty()) kind = one.mps ? "gres/mps:" : "gres/shard:";
    std::string what = std::string(kind) + type;
    if (most == 0)
      return InvalidArgument(what + " can never be satisfied in partition " + job.partition +
                             ": no " + (type.empty() ? "" : type + " ") + "GPU there is configured for " +
                             (one.mps ? "MPS (gres.conf Mps=yes)" : "shards (gres.conf Replicas=N)"));
    if (want > most)
      return InvalidArgument(what + ":" + std::to_string(want) +
                             " can never be satisfied in partition " + job.partition +
                             ": one GPU offers at most " + std::to_string(most) +
                             (one.mps ? " MPS percent" : " shards (gres.conf Replicas=)"));
  }
  return Status::Ok();
}

}  // namespace tessera::sched
