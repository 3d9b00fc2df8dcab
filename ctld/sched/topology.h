#pragma once
// Topology for the scheduler (issue 15): the TopologySnap (snapshot.h) built from a loaded
// topology.conf, and the placement helpers the allocate/backfill actions use.
#include <string>
#include <vector>

#include "common/topology_config.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sched {

// Builds the scheduler's view of `cfg` for nodes in `node_names` order (the order of
// ClusterSnapshot::nodes). Nodes of the config absent from `node_names` are left out; names in
// `node_names` with no place get node_leaf -1. kFlat gives a TopologySnap with kind kFlat.
// Switches and blocks keep the config's order (indices = file order); a switch's level is 0
// without children, else 1 + its highest child's level; a node listed twice keeps its first place
// (the parser refuses that). Empty `block_sizes` become Slurm's default (the largest block's size
// times 1, 2, 4... up to the block count); sizes are sorted ascending, duplicates and 0 dropped.
TopologySnap BuildTopologySnap(const TopologyConfig& cfg,
                               const std::vector<std::string>& node_names);

}  // namespace tessera::sched
