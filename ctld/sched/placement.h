#pragma once
// Placement of one job on the session's ClusterState: the shared core of the allocate and
// backfill actions.
//
//  - TryStartNow: places the whole gang now, inside a Statement, so that it also fits over
//    [now, now + time limit) on the timeline (it delays no reservation). Commits only when the
//    gang is ready (every task, or the job's gang minimum); else discards.
//  - TryReserve: the earliest start within bf_window where the gang fits for its whole time
//    limit; holds those resources in the timeline so later jobs cannot delay it.
// Nodes are taken in configured order; among the first `score_window` feasible nodes the
// session's node scores pick the best (kube-scheduler's bounded scoring), so a placement
// costs O(nodes scanned), not O(cluster).
#include <string>
#include <utility>
#include <vector>

#include "ctld/sched/session.h"

namespace tessera::sched {

enum class StartOutcome { kStarted, kLimited, kNoResources };

// A restriction of one placement attempt to some nodes (topology, issue 15): only `nodes` are
// considered, in that order (the job's partition and predicates still apply), and at most
// `leaf_caps[i].second` distinct nodes of leaf `leaf_caps[i].first` (TopologySnap::node_leaf)
// are used (--segment); leaves without a cap are not limited.
struct PlaceScope {
  std::vector<uint32_t> nodes;
  std::vector<std::pair<int32_t, uint32_t>> leaf_caps;
  const std::vector<int32_t>* node_leaf = nullptr;  // required when leaf_caps is not empty
};

// One attempt to place the whole job at `start` (allocate: now, taking resources; else a
// reservation over [start, start + limit)), trying each --constraint alternative; commits and
// fills `out` on success, changes nothing on failure. `scope` null = the job's partition.
bool PlaceAt(Session& s, JobInfo& j, int64_t start, bool allocate, const PlaceScope* scope,
             std::vector<NodePlacement>* out);

// PlaceAt(allocate now) as a probe: fills `out` when the job would fit, takes nothing.
bool ProbeAt(Session& s, JobInfo& j, const PlaceScope* scope, std::vector<NodePlacement>* out);

StartOutcome TryStartNow(Session& s, JobInfo& j, bool backfill);
bool TryReserve(Session& s, JobInfo& j);

// --- issue 16 §4 (preempt helper) ---
// Places `j` now (whole gang, every alternative) without recording a decision. keep = false:
// a probe, nothing stays taken; keep = true: the resources stay taken until now + time limit.
// A job on a topology (TopologyApplies) is placed as TryStartNow places it (PlaceWithTopology:
// --switches, --segment, TopologyMode), so a preemptor's victims are only chosen when their
// release yields a placement that satisfies its topology constraint.
bool PlaceNow(Session& s, JobInfo& j, bool keep, std::vector<NodePlacement>* out);
// Records a reservation of `j` at `start` on the nodes of `placed` (stage, decision, count).
void MarkReserved(Session& s, JobInfo& j, int64_t start, const std::vector<NodePlacement>& placed);

// The memo key: every field placement depends on (two jobs with equal keys place alike).
const std::string& ShapeKey(JobInfo& j);

}  // namespace tessera::sched
