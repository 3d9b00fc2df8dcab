#pragma once
// TopoState: the topology's candidate node sets and their free resources, per cycle (issue 15).
//
// A topology (TopologySnap) gives "leaves" (tree: switches that hold nodes; block: blocks) and
// candidate sets ("groups") in tiers, lowest first:
//   tree:  every switch is a group of the leaves under it; its tier is its level (0 = a leaf,
//          then its spine, ...). Group id = switch index.
//   block: tier 0 = each block (group id = block index); then one tier per BlockSizes entry
//          larger than the base block: aggregates of size/base consecutive blocks, aligned (blocks
//          0-1, 2-3, ... for twice the base), complete aggregates only. The base is BlockSizes' first
//          entry (Slurm's planning base block size), else the largest block's node count.
// Per partition and group it keeps the free resources now of the group's usable nodes, how many
// of them have a free CPU ("open") and how many are wholly free ("idle"), and the totals (for
// "could hold it on an empty cluster"). ClusterState owns one when the snapshot has a topology
// and calls OnChange after every change of a node's free-now amounts, so the sums stay exact
// (O(partitions of the node x tiers) per change). Nodes with no place in the topology are in no
// group.
#include <cstdint>
#include <memory>
#include <vector>

#include "ctld/sched/snapshot.h"

namespace tessera::sched {

struct Amount;
struct NodeRt;

struct TopoGroup {
  uint32_t tier = 0;
  std::vector<int32_t> leaves;  // leaf ids (switch or block indices)
};

struct GroupFree {
  int64_t cpus = 0, mem = 0, gpus = 0;        // free now
  int64_t cpus_total = 0, mem_total = 0, gpus_total = 0;
  int32_t open = 0;   // usable nodes with a free CPU now
  int32_t gpu_open = 0;  // of those, nodes with a free GPU unit now
  int32_t idle = 0;   // usable nodes wholly free now (every CPU)
  int32_t nodes = 0;  // usable nodes
};

class TopoState {
 public:
  TopoState(std::shared_ptr<const TopologySnap> topo, const std::vector<NodeRt>& nodes,
            size_t partitions);

  const TopologySnap& topo() const { return *topo_; }
  bool IsTree() const { return topo_->kind == TopologyKind::kTree; }
  size_t TierCount() const { return tiers_.size(); }
  const std::vector<uint32_t>& Tier(size_t t) const { return tiers_[t]; }
  size_t GroupCount() const { return groups_.size(); }
  const TopoGroup& Group(uint32_t g) const { return groups_[g]; }
  const GroupFree& Free(int partition, uint32_t g) const {
    return free_[static_cast<size_t>(partition)][g];
  }
  // The groups holding leaf `leaf`, lowest tier first (the first is the leaf's own group).
  const std::vector<uint32_t>& GroupsOfLeaf(int32_t leaf) const {
    return leaf_groups_[static_cast<size_t>(leaf)];
  }
  int32_t LeafOf(uint32_t node) const { return topo_->node_leaf[node]; }
  const std::vector<uint32_t>& LeafNodes(int32_t leaf) const;
  // The nodes of group `g`'s leaves in node Weight order (then topology order); built on first
  // use and kept for the cycle (nodes and weights do not change within a cycle).
  const std::vector<uint32_t>& GroupNodes(uint32_t g, const std::vector<NodeRt>& nodes);
  // The largest usable node of the partition (CPUs and GPUs, each its own maximum).
  int64_t MaxNodeCpus(int partition) const { return max_cpus_[static_cast<size_t>(partition)]; }
  int64_t MaxNodeGpus(int partition) const { return max_gpus_[static_cast<size_t>(partition)]; }

  void OnChange(const NodeRt& n, const Amount& before);

 private:
  void BuildTree();
  void BuildBlocks();

  std::shared_ptr<const TopologySnap> topo_;
  std::vector<TopoGroup> groups_;
  std::vector<std::vector<uint32_t>> tiers_;
  std::vector<std::vector<uint32_t>> leaf_groups_;
  std::vector<std::vector<GroupFree>> free_;  // [partition][group]
  std::vector<int64_t> max_cpus_, max_gpus_;
  std::vector<std::vector<uint32_t>> group_nodes_;  // GroupNodes cache; empty = not built
};

}  // namespace tessera::sched
