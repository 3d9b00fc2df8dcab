#include "ctld/sched/topology_state.h"

#include <algorithm>

#include "ctld/sched/cluster_state.h"

namespace tessera::sched {

TopoState::TopoState(std::shared_ptr<const TopologySnap> topo, const std::vector<NodeRt>& nodes,
                     size_t partitions)
    : topo_(std::move(topo)) {
  if (IsTree()) {
    BuildTree();
  } else {
    BuildBlocks();
  }
  free_.assign(partitions, std::vector<GroupFree>(groups_.size()));
  max_cpus_.assign(partitions, 0);
  max_gpus_.assign(partitions, 0);
  for (const NodeRt& n : nodes) {
    if (!n.usable) continue;
    for (uint32_t p : n.partitions) {
      max_cpus_[p] = std::max(max_cpus_[p], n.total.cpus);
      max_gpus_[p] = std::max(max_gpus_[p], n.total.gpus);
    }
    int32_t leaf = n.index < topo_->node_leaf.size() ? topo_->node_leaf[n.index] : -1;
    if (leaf < 0) continue;
    for (uint32_t p : n.partitions) {
      for (uint32_t g : GroupsOfLeaf(leaf)) {
        GroupFree& f = free_[p][g];
        f.cpus += n.free.cpus, f.mem += n.free.mem, f.gpus += n.free.gpus;
        f.cpus_total += n.total.cpus, f.mem_total += n.total.mem, f.gpus_total += n.total.gpus;
        f.open += n.free.cpus > 0;
        f.gpu_open += n.free.cpus > 0 && n.free.gpus > 0;
        f.idle += n.free.cpus >= n.total.cpus;
        ++f.nodes;
      }
    }
  }
}

void TopoState::BuildTree() {
  const auto& sw = topo_->switches;
  groups_.resize(sw.size());
  leaf_groups_.resize(sw.size());
  for (uint32_t s = 0; s < sw.size(); ++s) {
    groups_[s].tier = sw[s].level;
    if (sw[s].nodes.empty()) continue;
    // A leaf belongs to itself and to every ancestor (bounded: the parser refuses cycles).
    int32_t cur = static_cast<int32_t>(s);
    for (size_t hops = 0; cur >= 0 && hops <= sw.size(); ++hops) {
      groups_[static_cast<size_t>(cur)].leaves.push_back(static_cast<int32_t>(s));
      leaf_groups_[s].push_back(static_cast<uint32_t>(cur));
      cur = sw[static_cast<size_t>(cur)].parent;
    }
  }
  for (uint32_t s = 0; s < sw.size(); ++s) {
    if (groups_[s].leaves.empty()) continue;
    if (tiers_.size() <= groups_[s].tier) tiers_.resize(groups_[s].tier + 1);
    tiers_[groups_[s].tier].push_back(s);
  }
}

void TopoState::BuildBlocks() {
  const auto& blocks = topo_->blocks;
  size_t base = topo_->block_sizes.empty() ? 0 : topo_->block_sizes[0];
  if (base == 0)
    for (const auto& b : blocks) base = std::max(base, b.nodes.size());
  leaf_groups_.resize(blocks.size());
  tiers_.emplace_back();
  for (uint32_t b = 0; b < blocks.size(); ++b) {
    groups_.push_back({0, {static_cast<int32_t>(b)}});
    leaf_groups_[b].push_back(b);
    tiers_[0].push_back(b);
  }
  size_t last_m = 1;
  for (uint32_t size : topo_->block_sizes) {
    size_t m = base ? size / base : 0;
    if (m <= last_m || m > blocks.size()) continue;
    last_m = m;
    uint32_t tier = static_cast<uint32_t>(tiers_.size());
    tiers_.emplace_back();
    for (size_t first = 0; first + m <= blocks.size(); first += m) {
      TopoGroup g{tier, {}};
      auto id = static_cast<uint32_t>(groups_.size());
      for (size_t b = first; b < first + m; ++b) {
        g.leaves.push_back(static_cast<int32_t>(b));
        leaf_groups_[b].push_back(id);
      }
      groups_.push_back(std::move(g));
      tiers_[tier].push_back(id);
    }
  }
}

const std::vector<uint32_t>& TopoState::LeafNodes(int32_t leaf) const {
  auto i = static_cast<size_t>(leaf);
  return IsTree() ? topo_->switches[i].nodes : topo_->blocks[i].nodes;
}

const std::vector<uint32_t>& TopoState::GroupNodes(uint32_t g, const std::vector<NodeRt>& nodes) {
  if (group_nodes_.empty()) group_nodes_.resize(groups_.size());
  std::vector<uint32_t>& out = group_nodes_[g];
  if (!out.empty()) return out;
  for (int32_t leaf : groups_[g].leaves)
    for (uint32_t n : LeafNodes(leaf))
      if (n < nodes.size()) out.push_back(n);
  std::stable_sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    return nodes[a].snap->weight < nodes[b].snap->weight;
  });
  return out;
}

void TopoState::OnChange(const NodeRt& n, const Amount& before) {
  int32_t leaf = n.index < topo_->node_leaf.size() ? topo_->node_leaf[n.index] : -1;
  if (leaf < 0 || !n.usable) return;
  int64_t dc = n.free.cpus - before.cpus, dm = n.free.mem - before.mem,
          dg = n.free.gpus - before.gpus;
  int32_t dopen = (n.free.cpus > 0) - (before.cpus > 0);
  int32_t didle = (n.free.cpus >= n.total.cpus) - (before.cpus >= n.total.cpus);
  int32_t dgpu = (n.free.cpus > 0 && n.free.gpus > 0) - (before.cpus > 0 && before.gpus > 0);
  for (uint32_t p : n.partitions) {
    for (uint32_t g : GroupsOfLeaf(leaf)) {
      GroupFree& f = free_[p][g];
      f.cpus += dc, f.mem += dm, f.gpus += dg, f.open += dopen, f.idle += didle;
      f.gpu_open += dgpu;
    }
  }
}

}  // namespace tessera::sched
