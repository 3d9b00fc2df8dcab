#pragma once
// Dynamic MIG planner (MigStrategy=dynamic, issue 14 §2): a pure function from the MIG-capable
// GPUs of some nodes and the pending demand for MIG profiles to new GPU layouts.
//
// Contract
//  - Only GPUs with `dynamic` set, not `busy`, whose instances are ALL free are ever changed; an
//    instance in use is never destroyed (the GPU is simply not a candidate). A GPU not in MIG
//    mode (mig_enabled=false) is a candidate only with MigPlanOptions::allow_enable_mig.
//  - Every layout produced is valid under ValidateMigLayout (common/mig_profiles.h): allowed
//    starts, no shared memory slice, max counts, exclusive groups, compute budget.
//  - Demand is served in the given (priority) order, each item wholly on ONE node (possibly on
//    several GPUs of it) or not at all. A gang item (MigDemand::node_count > 1) gets `count`
//    instances on EACH of node_count distinct nodes, all or nothing: when fewer nodes can hold
//    their share, nothing is re-laid (nor claimed) for it. Free instances of the asked profile
//    that a GPU keeps count toward a demand item (claimed, so a later item cannot count them
//    again).
//  - Deterministic: the same input gives the same output (no clock, no random, no hash order).
//
// Choice (how a GPU gets the instances of one demand item)
//  1. GPU order, per node: GPUs this plan already changed and that hold the same profile, then
//     other GPUs this plan already changed, then GPUs in MIG mode, then GPUs not in MIG mode
//     (switching mode is the most disruptive); ties by GPU index. Nodes: the node whose best GPU
//     ranks first, ties by input order. So one GPU fills before another opens, and like demand
//     groups on the same GPU.
//  2. On one GPU: destroy as few free instances as possible (keep all, else every subset with
//     one fewer, ...); among the layouts with that fewest destroyed, add the needed instances at
//     the starts with the best fragmentation score, ties by the lexicographically smallest
//     starts. When the whole count does not fit on a GPU, the most that fit go there and the
//     next GPU of the node takes the rest.
//  3. Fragmentation score of a layout (higher is better): the sum, over every profile p of the
//     model without media extensions and every allowed start s of p where one more instance of p
//     could still be created (free memory slices, count below max, compute budget left), of
//     size(p)^2 (size = memory slices). The square makes keeping a large placement possible
//     (7g: 64, 4g/3g: 16) worth more than several small ones (2g: 4, 1g: 1). Example (A100 80GB,
//     empty GPU): one 1g.10gb goes to start 6 (score 62: 4g@0, 3g@0, 2g@0/2/4, ... stay
//     possible), not to start 4 (58: 2g@4 lost) nor start 0 (42: 4g and 3g@0 lost).
#include <cstdint>
#include <string>
#include <vector>

#include "ctld/sched/decision.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sched {

struct MigPlanNode {
  std::string name;
  std::vector<MigGpuSnap> gpus;
};

struct MigDemand {
  uint64_t job_id = 0;
  std::string profile;          // "2g.20gb"
  uint32_t count = 1;           // instances, all on one node (per node for a gang)
  std::vector<uint32_t> nodes;  // allowed nodes (indices into the planner's node list); empty = any
  uint32_t node_count = 1;      // gangs (issue 14): distinct nodes that each need `count`
};

struct MigPlanOptions {
  bool allow_enable_mig = true;  // may a GPU not in MIG mode be switched into it
};

// Fragmentation score of `layout` on `model` (see above). Exposed for tests.
int64_t MigFragmentationScore(const std::string& model, const std::vector<MigInstanceSnap>& layout);

// The reconfigurations serving as much of `demand` as possible, in node order then GPU index.
// A MigReconfig's destroy lists every instance UUID that does not survive; create lists the new
// (profile, start) pairs; for_jobs lists the demand items it serves. A GPU switched into MIG mode
// has an empty destroy.
std::vector<MigReconfig> PlanMig(const std::vector<MigPlanNode>& nodes,
                                 const std::vector<MigDemand>& demand,
                                 const MigPlanOptions& opt = {});

}  // namespace tessera::sched
