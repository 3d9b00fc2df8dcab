#pragma once
// tacct reads the archive (acct_jobs) and then the controller's live table. A job's end is in
// the live table at once but reaches the archive only when its transaction commits (the
// writer's group commit, which lags under load): the live pass therefore includes finished
// jobs too, so every job that has ended is in the answer from the moment it ended - the archive
// read comes first, and a job missing there is still in memory (finished jobs stay MinJobAge).
#include <algorithm>

#include "ctld/jobs/job.h"
#include "ctld/state/store.h"

namespace tessera::ctld::rpc {

// Whether `x` passes a request's list filter: an empty list lets everything through.
bool InFilter(const auto& list, const auto& x) {
  return list.empty() || std::find(list.begin(), list.end(), x) != list.end();
}

// Whether a live record belongs in an accounting answer for `f`, as the archive query would
// select it (same job id, uid, state filters; a finished job by its end time, an active one
// whatever the start filter; submitted and started before `end_before`).
bool LiveJobMatches(const JobRecord& j, const AccountingFilter& f);

}  // namespace tessera::ctld::rpc
