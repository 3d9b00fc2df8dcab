#include "ctld/rpc/accounting_live.h"

namespace tessera::ctld::rpc {

bool LiveJobMatches(const JobRecord& j, const AccountingFilter& f) {
  bool id_ok = InFilter(f.job_ids, j.job_id) ||
               (f.array_span && j.array_job_id && InFilter(f.job_ids, j.array_job_id));  // issue 19
  if (!id_ok || !InFilter(f.uids, j.uid) || !InFilter(f.states, j.state)) return false;
  if (IsFinished(j.State()) && f.start_after && j.end_time < f.start_after) return false;
  if (f.end_before) {
    if (j.submit_time > f.end_before) return false;
    if (IsFinished(j.State()) && j.start_time != 0 && j.start_time > f.end_before) return false;
  }
  return true;
}

}  // namespace tessera::ctld::rpc
