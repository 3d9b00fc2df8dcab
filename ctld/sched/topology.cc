#include "ctld/sched/topology.h"

#include <algorithm>
#include <unordered_map>

namespace tessera::sched {
namespace {

using NameIndex = std::unordered_map<std::string, uint32_t>;

NameIndex IndexNames(const std::vector<std::string>& names) {
  NameIndex idx;
  idx.reserve(names.size());
  for (uint32_t i = 0; i < names.size(); ++i) idx.emplace(names[i], i);  // first one wins
  return idx;
}

// Snapshot indices of `names` that are in the snapshot and have no place yet (a node listed
// twice keeps its first place; the parser refuses that anyway). Marks them in node_leaf.
std::vector<uint32_t> PlaceNodes(const std::vector<std::string>& names, const NameIndex& idx,
                                 int32_t place, std::vector<int32_t>* node_leaf) {
  std::vector<uint32_t> out;
  out.reserve(names.size());
  for (const auto& n : names) {
    auto it = idx.find(n);
    if (it == idx.end() || (*node_leaf)[it->second] != -1) continue;
    (*node_leaf)[it->second] = place;
    out.push_back(it->second);
  }
  return out;
}

// Level of switch `s`: 0 for a switch without children, else 1 + the highest child level.
// `state`: 0 unvisited, 1 in progress (a cycle: the back edge counts as level 0), 2 done.
uint32_t ComputeLevel(TopologySnap* t, uint32_t s, std::vector<uint8_t>* state) {
  if ((*state)[s] == 2) return t->switches[s].level;
  if ((*state)[s] == 1) return 0;
  (*state)[s] = 1;
  uint32_t level = 0;
  for (uint32_t c : t->switches[s].children) {
    level = std::max(level, ComputeLevel(t, c, state) + 1);
  }
  t->switches[s].level = level;
  (*state)[s] = 2;
  return level;
}

void BuildTree(const TopologyConfig& cfg, const NameIndex& node_idx, TopologySnap* t) {
  NameIndex sw_idx;
  for (const auto& sw : cfg.switches) {
    if (sw_idx.count(sw.name)) continue;
    sw_idx.emplace(sw.name, static_cast<uint32_t>(t->switches.size()));
    TopologySnap::Switch snap_sw;
    snap_sw.name = sw.name;
    t->switches.push_back(std::move(snap_sw));
  }
  for (const auto& sw : cfg.switches) {
    uint32_t s = sw_idx.at(sw.name);
    if (t->switches[s].nodes.empty()) {
      t->switches[s].nodes = PlaceNodes(sw.nodes, node_idx, static_cast<int32_t>(s),
                                        &t->node_leaf);
    }
    for (const auto& child : sw.switches) {
      auto it = sw_idx.find(child);
      // Unknown children, self-loops and second parents are refused by the parser; skip them.
      if (it == sw_idx.end() || it->second == s || t->switches[it->second].parent != -1) continue;
      t->switches[it->second].parent = static_cast<int32_t>(s);
      t->switches[s].children.push_back(it->second);
    }
  }
  std::vector<uint8_t> state(t->switches.size(), 0);
  for (uint32_t s = 0; s < t->switches.size(); ++s) ComputeLevel(t, s, &state);
}

// Slurm's default BlockSizes: the base block size (the largest block) and its power-of-two
// multiples up to the number of blocks.
std::vector<uint32_t> DefaultBlockSizes(const TopologySnap& t, const TopologyConfig& cfg) {
  uint32_t base = 0;
  for (const auto& b : cfg.blocks) base = std::max(base, static_cast<uint32_t>(b.nodes.size()));
  std::vector<uint32_t> sizes;
  if (base == 0) return sizes;
  for (uint64_t k = 1; k <= t.blocks.size(); k *= 2) sizes.push_back(base * k);
  return sizes;
}

void BuildBlocks(const TopologyConfig& cfg, const NameIndex& node_idx, TopologySnap* t) {
  for (const auto& b : cfg.blocks) {
    TopologySnap::Block block;
    block.name = b.name;
    block.nodes = PlaceNodes(b.nodes, node_idx, static_cast<int32_t>(t->blocks.size()),
                             &t->node_leaf);
    t->blocks.push_back(std::move(block));
  }
  t->block_sizes = cfg.block_sizes.empty() ? DefaultBlockSizes(*t, cfg) : cfg.block_sizes;
  std::sort(t->block_sizes.begin(), t->block_sizes.end());
  t->block_sizes.erase(std::unique(t->block_sizes.begin(), t->block_sizes.end()),
                       t->block_sizes.end());
  t->block_sizes.erase(std::remove(t->block_sizes.begin(), t->block_sizes.end(), 0u),
                       t->block_sizes.end());
}

}  // namespace

TopologySnap BuildTopologySnap(const TopologyConfig& cfg,
                               const std::vector<std::string>& node_names) {
  TopologySnap t;
  t.kind = cfg.kind;
  t.node_leaf.assign(node_names.size(), -1);
  if (cfg.kind == TopologyKind::kFlat) return t;
  NameIndex node_idx = IndexNames(node_names);
  if (cfg.kind == TopologyKind::kTree) {
    BuildTree(cfg, node_idx, &t);
  } else {
    BuildBlocks(cfg, node_idx, &t);
  }
  return t;
}

}  // namespace tessera::sched
