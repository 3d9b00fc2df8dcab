#pragma once
// Topology-aware placement of multi-node jobs (issue 15), used by TryStartNow and TryReserve
// (placement.h) when the snapshot has a topology (ClusterState::topo(), topology_state.h).
//
// Which jobs: those that may span nodes: nodes_min >= 2, or (nodes_max != 1 and the request is
// larger than the partition's largest node). Single-node jobs are placed as without a topology.
//
// Where (PlaceWithTopology): the candidate sets are the topology's groups (one leaf switch or
// block first, then the lowest common switch / the smallest BlockSizes aggregate), tier by tier.
// In a tier, the groups whose free sums could hold the job (CPUs, GPUs, usable nodes: open ones,
// idle ones for --exclusive, ones with a free GPU when every task asks GPUs; upper bounds, so no
// set that fits is ever passed over) are tried best-fit first: least free capacity left after the job
// (GPUs for GPU jobs, else CPUs; ties: fewer open nodes, then group order), at most
// kTopoTriesPerTier per tier, each a normal placement (node scoring included) restricted to the
// group's nodes (PlaceScope, in node Weight order). So a placement costs O(groups) to rank plus
// O(nodes of the tried groups), never an enumeration of node subsets.
//   - TopologyMode required (PartitionSnap::topology_required; a QoS TopologyMode= overrides):
//     only tiers up to the lowest one with a group that could hold the job on an empty cluster
//     ("need tier"); else the job waits with reason "Topology" (when the partition has room
//     spread) or "Resources". A job no group could ever hold may spread.
//   - preferred (default): every tier, then anywhere in the partition.
//   - --switches=N (tree) while waiting (now < eligible_time (else submit_time) +
//     switches_wait_s): only sets of at most N leaves (a group's N leaves with the most free
//     CPUs/GPUs); else the job waits with reason "Resources" (as Slurm, which has no reason of
//     its own for this). After the wait it is placed as preferred/required says. switches_wait_s
//     0 = no wait (ctld fills Slurm's max_switch_wait default when the job gave none).
//   - --segment=N (block): ceil(nodes / N) segments of N nodes, each inside one block: the
//     smallest-fitting single block that holds every segment, else blocks by most free
//     segments; each block used gets exactly its segments' nodes (PlaceScope::leaf_caps).
//     Never relaxed (reason "Resources"). Ignored on a tree.
//
// Reservations (ReserveWithTopology): the same search at each start time the timeline offers
// (now, then each time resources come back within bf_window), with each group's resources at
// that time; only groups that gained resources at that time are re-tried. The reservation holds
// the chosen set's nodes on the timeline, so backfilled jobs cannot delay or split it.
#include <cstdint>
#include <string>
#include <vector>

#include "ctld/sched/session.h"

namespace tessera::sched {

inline constexpr uint32_t kTopoTriesPerTier = 4;

// Whether topology placement applies to `j` (see above).
bool TopologyApplies(Session& s, const JobInfo& j);
// Places `j` now (allocate) or reserves it at `start`; fills `out` and commits on success.
bool PlaceWithTopology(Session& s, JobInfo& j, int64_t start, bool allocate,
                       std::vector<NodePlacement>* out);
// PlaceWithTopology now as a probe (the preempt action's PlaceNow): fills `out` when the job
// would fit, takes nothing.
bool ProbeWithTopology(Session& s, JobInfo& j, std::vector<NodePlacement>* out);
// TryReserve for topology jobs: the earliest start within bf_window with a fitting set.
bool ReserveWithTopology(Session& s, JobInfo& j);
// What the shape memo needs beyond ShapeKey: mode, --switches waiting, --segment.
std::string TopologyKeySuffix(Session& s, const JobInfo& j);
// The reason of a topology job that did not start: "Topology" when TopologyMode=required keeps
// it from spreading over free resources, else "Resources".
std::string TopologyWaitReason(Session& s, const JobInfo& j);
// Whether TopologyMode is required for `j` (its QoS's TopologyMode=, else its partition's).
bool TopologyRequired(Session& s, const JobInfo& j);

}  // namespace tessera::sched
