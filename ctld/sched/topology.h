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
TopologySnap BuildTopologySnap(const TopologyConfig& cfg,
                               const std::vector<std::string>& node_names);

}  // namespace tessera::sched
