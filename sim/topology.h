#pragma once
// Topology in tessera-sim (issue 15): the cluster's topology from a topology.conf file or
// generated, and how spread the multi-node jobs of a run were.
//
//   --topology FILE --topology-plugin topology/tree|topology/block   (LoadTopologyConfig)
//   --gen-topology fat-tree:L,S   leaf switches of L nodes in node (config) order, spine switches
//                                 of S leaves each, one core switch over the spines (3 tiers)
//   --gen-topology block:B        blocks of B nodes in node order, BlockSizes=B,2B,4B,... up to
//                                 the first covering every node (Slurm's power-of-two aggregates)
//   --topology-mode required|preferred  the partitions' TopologyMode (default preferred)
//   --compare topo-aware,topo-blind     the same run with the topology given to the scheduler,
//                                       and without (flat placement); spread is measured
//                                       against the same topology in both.
//
// Spread of a started multi-node job (placed on 2 or more nodes): used = the distinct leaves
// (tree) or blocks it got; needed = the fewest leaves/blocks that could hold its node count on
// an empty cluster (the largest first). Reported per run: multi-node jobs, how many got more
// than needed, mean and worst used/needed, mean extra leaves.
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/topology_config.h"
#include "ctld/sched/snapshot.h"
#include "sim/engine.h"

namespace tessera::sim {

// "fat-tree:L,S" or "block:B" (see above) over `nodes` in order. Errors name the spec.
Result<TopologyConfig> GenerateTopology(const std::string& spec,
                                        const std::vector<std::string>& nodes);

// Applies --topology/--topology-plugin or --gen-topology, and --topology-mode, to `cluster`
// (node order = cluster->nodes). No topology option: nothing changes. A bad option or topology
// file is an error (the parser's "file:line: message"); its warnings go to `warnings`.
Status ApplyTopologyArgs(const std::map<std::string, std::string>& args,
                         sched::ClusterSnapshot* cluster, std::vector<std::string>* warnings);
// "topo-aware" (the cluster's topology) and "topo-blind" (none given to the scheduler).
bool IsTopologyVariant(const std::string& name);

struct SpreadMetrics {
  std::string label;
  size_t multi_node = 0;   // started jobs placed on >= 2 nodes
  size_t over = 0;         // of those, placed on more leaves/blocks than needed
  double mean_ratio = 0;   // mean used/needed
  double worst_ratio = 0;  // max used/needed
  double mean_extra = 0;   // mean used - needed
  size_t worst_used = 0, worst_needed = 0;
};

// Spread of `run` against `topo` (built for the run's node order, `node_names`).
SpreadMetrics ComputeSpread(const SimRun& run, const sched::TopologySnap& topo);
void PrintSpreadTable(std::ostream& out, const std::vector<SpreadMetrics>& runs);

}  // namespace tessera::sim
