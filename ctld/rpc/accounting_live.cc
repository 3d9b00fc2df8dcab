#include "ctld/rpc/accounting_live.h"

#include <algorithm>

namespace tessera::ctld::rpc {
namespace {

template <typename L, typename X>
bool In(const L& list, const X& x) {
  return list.empty() || std::find(list.begin(), list.end(), x) != list.end();
}

}  // namespace

bool LiveJobMatches(const JobRecord& j, const AccountingFilter& f) {
  if (!In(f.job_ids, j.job_id) || !In(f.uids, j.uid) || !In(f.states, j.state)) return false;
  if (IsFinished(j.State()) && f.start_after && j.end_time < f.start_after) return false;
  if (f.end_before) {
    if (j.submit_time > f.end_before) return false;
    if (IsFinished(j.State()) && j.start_time != 0 && j.start_time > f.end_before) return false;
  }
  return true;
}

}  // namespace tessera::ctld::rpc
