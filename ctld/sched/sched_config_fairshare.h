#pragma once
// Fair-share keys of SchedConfig (issue 16 §3; fields in sched_config.h's fair-share block).
// Each parser answers true when the key was its own, false to let the caller go on, or an error
// "file:line: invalid value ... for KEY: why".
#include <string>

#include "common/config_file.h"
#include "common/status.h"
#include "ctld/sched/sched_config.h"

namespace tessera::sched {

// PriorityDecayHalfLife, PriorityUsageResetPeriod, PriorityFlags, PriorityCalcPeriod.
Result<bool> ParseFairshareGlobal(const std::string& where, const ConfigPair& p, SchedConfig& c);
// A PartitionName= line's TRESBillingWeights (validated, kept per partition).
Status ParseFairsharePartition(const ConfigLine& l, SchedConfig& c);
// An AccountName= line's Fairshare= (or Shares=).
Result<bool> ParseAccountFairshare(const std::string& where, const ConfigPair& p,
                                   AccountConfig& a);

}  // namespace tessera::sched
