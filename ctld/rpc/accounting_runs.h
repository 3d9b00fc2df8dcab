#pragma once
// tacct -D (sacct --duplicates, issue 16 §4): a requeued job keeps its id, so its archive row
// and live record describe only its last run. Its earlier runs are rebuilt from its events:
// each `started` ... `requeued` span is one row with that run's start, end (the requeue), nodes
// and suspended time (`suspended`/`resumed` inside it), state PREEMPTED when the run was
// preempted (a `preempted` event in it, or the requeue's reason "Preempted"; Slurm logs a
// preempted-and-requeued run PREEMPTED) and REQUEUED otherwise. Pure.
#include <vector>

#include "ctld/jobs/job.h"
#include "tessera/v1/controller.pb.h"

namespace tessera::ctld::rpc {

// The earlier runs of `job` (its own row, as ToProto makes it), oldest first, from `events`
// (the job's events in order). Each copy keeps the job's spec and ids.
std::vector<v1::JobInfo> EarlierRuns(const v1::JobInfo& job, const std::vector<JobEvent>& events);

}  // namespace tessera::ctld::rpc
