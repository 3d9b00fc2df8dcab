#include "ctld/gpu_shares.h"

#include <algorithm>
#include <tuple>

namespace tessera::ctld {
namespace {

uint32_t Used(const std::map<uint32_t, uint32_t>& m, uint32_t gpu) {
  auto it = m.find(gpu);
  return it == m.end() ? 0 : it->second;
}

}  // namespace

void ApplyConfiguredShares(std::vector<GpuState>& gpus, const std::vector<GpuDecl>& decls) {
  uint32_t index = 0;
  for (const auto& d : decls)
    for (uint32_t i = 0; i < d.count; ++i, ++index)
      for (auto& g : gpus) {
        if (g.index != index) continue;
        if (!d.mps_counts.empty()) {  // Name=mps lines: gres.conf is the truth for the count
          g.mps = d.MpsCount(i) > 0;
          g.mps_count = d.MpsCount(i);
        }
        if (!d.shard_counts.empty()) g.replicas = d.ShardCount(i);
        if (!d.mps_counts.empty() || !d.shard_counts.empty() || g.mps || g.replicas) continue;
        g.mps = d.mps;
        g.replicas = d.replicas;
      }
}

uint32_t MpsTotal(const GpuState& g) {
  return !g.mps ? 0 : g.mps_count ? g.mps_count : kMpsPerGpu;
}

uint32_t MpsPercent(uint32_t mps, uint32_t total) {
  if (mps == 0 || total == 0) return 0;
  auto pct = static_cast<uint32_t>(uint64_t{mps} * 100 / total);
  return std::clamp<uint32_t>(pct, 1, 100);
}

void SetMpsPercent(NodeAlloc& a, const NodeRuntime* n) {
  if (a.mps == 0 || a.gpu_indices.empty() || !n) return;
  for (const auto& g : n->gpus)
    if (g.index == a.gpu_indices[0] && MpsTotal(g) != kMpsPerGpu)
      a.mps_percent = MpsPercent(a.mps, MpsTotal(g));
}

void FillSharePools(sched::NodeSnap& ns, const NodeRuntime& rt) {
  ns.gpu_shares.clear();
  for (const auto& g : rt.gpus) {
    if (g.mig_enabled || (!g.mps && g.replicas == 0)) continue;
    ns.gpu_shares.push_back({g.index, MpsTotal(g), Used(rt.alloc_mps, g.index),
                             g.replicas, Used(rt.alloc_shards, g.index)});
  }
  for (auto& g : ns.gpus)
    if (g.mig_uuid.empty() && (Used(rt.alloc_mps, g.index) || Used(rt.alloc_shards, g.index)))
      g.free = false;
}

void FillConfigSharePools(sched::NodeSnap& ns, const std::vector<GpuDecl>& decls) {
  uint32_t index = 0;
  for (const auto& d : decls)
    for (uint32_t i = 0; i < d.count; ++i, ++index)
      if (d.MpsCount(i) || d.ShardCount(i))
        ns.gpu_shares.push_back({index, d.MpsCount(i), 0, d.ShardCount(i), 0});
}

void AddShareReleases(std::vector<sched::RunningSnap>& running,
                      const std::vector<std::pair<size_t, const JobRecord*>>& shared) {
  // (node, gpu) -> (latest end, running position, node use position)
  std::map<std::pair<std::string, uint32_t>, std::tuple<int64_t, size_t, size_t>> last;
  for (const auto& [r, job] : shared) {
    for (const auto& a : job->alloc) {
      if (!IsShareAlloc(a) || a.gpu_indices.empty()) continue;
      for (size_t u = 0; u < running[r].nodes.size(); ++u) {
        sched::NodeUse& use = running[r].nodes[u];
        if (use.node != a.node) continue;
        use.gpus = 0;  // a shared GPU is not held whole
        auto key = std::make_pair(a.node, a.gpu_indices[0]);
        auto l = last.find(key);
        if (l == last.end() || std::get<0>(l->second) < running[r].end_time)
          last[key] = {running[r].end_time, r, u};
      }
    }
  }
  for (const auto& [key, v] : last) running[std::get<1>(v)].nodes[std::get<2>(v)].gpus += 1;
}

bool SharesStillFit(const sched::NodePlacement& p, const NodeRuntime& n) {
  for (uint32_t g : p.gpu_indices)
    if (Used(n.alloc_mps, g) || Used(n.alloc_shards, g)) return false;
  if (p.share_gpu < 0) return true;
  auto g = static_cast<uint32_t>(p.share_gpu);
  if (std::count(n.alloc_gpus.begin(), n.alloc_gpus.end(), g)) return false;
  const GpuState* gs = nullptr;
  for (const auto& x : n.gpus)
    if (x.index == g) gs = &x;
  if (!gs || !gs->healthy) return false;
  uint32_t mps = Used(n.alloc_mps, g), shards = Used(n.alloc_shards, g);
  if (p.mps && (shards || !gs->mps || mps + p.mps > MpsTotal(*gs))) return false;
  if (p.shards && (mps || shards + p.shards > gs->replicas)) return false;
  return true;
}

bool IsShareAlloc(const NodeAlloc& a) { return a.mps > 0 || a.shards > 0; }

void ApplyShareUse(const NodeAlloc& a, NodeRuntime& n, bool add) {
  if (!IsShareAlloc(a) || a.gpu_indices.empty()) return;
  uint32_t g = a.gpu_indices[0];
  auto apply = [&](std::map<uint32_t, uint32_t>& m, uint32_t v) {
    if (!v) return;
    uint32_t& cur = m[g];
    cur = add ? cur + v : cur - std::min(cur, v);
    if (cur == 0) m.erase(g);
  };
  apply(n.alloc_mps, a.mps);
  apply(n.alloc_shards, a.shards);
}

}  // namespace tessera::ctld
