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

#include "ctld/sched/session.h"

namespace tessera::sched {

enum class StartOutcome { kStarted, kLimited, kNoResources };

StartOutcome TryStartNow(Session& s, JobInfo& j, bool backfill);
bool TryReserve(Session& s, JobInfo& j);

// --- issue 16 §4 (preempt helper) ---
// Places `j` now (whole gang, every alternative) without recording a decision. keep = false:
// a probe, nothing stays taken; keep = true: the resources stay taken until now + time limit.
bool PlaceNow(Session& s, JobInfo& j, bool keep, std::vector<NodePlacement>* out);

// The memo key: every field placement depends on (two jobs with equal keys place alike).
const std::string& ShapeKey(JobInfo& j);

}  // namespace tessera::sched
