#pragma once
// Live fair-share usage (issue 16 §3): every running job charges its association (account,
// user) in billing units per second (the partition's TRESBillingWeights, ctld/sched/fairshare.h),
// decayed with PriorityDecayHalfLife and reset by PriorityUsageResetPeriod. Core thread only.
//
// Contract:
//  - Advance(now, ...) charges each job over the part of (last, now] it ran: a job still running
//    up to now, a job that ended since (given with its end, or found through `ended`) up to its
//    end; each job once. Jobs that started
//    before `last` are charged from `last`, others from their start. Usage then decays over
//    now - last (Slurm: usage * f^dt + billing * run * f^run).
//  - Resets: the period's resets that fall in (last_reset, now] zero every association's usage
//    (NOW: once, when the ledger is loaded). The first load of a new state sets last_reset = now.
//  - Persistence (migration 7): Advance returns a Batch with the rows it changed and the meta
//    keys usage_last_charge / usage_last_reset; committed, a restart loads exactly that.
//    Load() decays the loaded usage over the downtime (now - usage_last_charge) and charges
//    nothing for it: jobs that ran on while ctld was down are charged from the restart on.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ctld/jobs/job.h"
#include "ctld/nodes/node_table.h"
#include "ctld/sched/fairshare.h"
#include "ctld/sched/sched_config.h"
#include "ctld/state/store.h"

namespace tessera::ctld {

// The billable TRES of a job's allocation (GPU types from gres.conf/Gres= types, else the
// reported model; MIG instances by profile; MPS by percent).
sched::TresCount JobTres(const JobRecord& j, NodeTable& nodes);

class UsageLedger {
 public:
  struct ChargeJob {
    uint64_t id = 0;
    std::string account, user;
    double billing = 0;        // units per second
    int64_t start = 0;
    int64_t end = 0;           // 0: still running; else it ended then (a job that started and
                               // ended between two charges is only seen this way)
  };
  // Loaded state; `now` is the restart time.
  void Load(const std::vector<UsageRow>& rows, int64_t last_charge, int64_t last_reset,
            int64_t now, const sched::SchedConfig& cfg, Batch* out);
  // `running`: jobs holding resources now, and jobs that ended after last_charge() (with `end`);
  // `ended(id)`: end time of a job charged before that is no longer listed (0 = unknown: up to
  // now).
  void Advance(int64_t now, const std::vector<ChargeJob>& running,
               const std::function<int64_t(uint64_t)>& ended, const sched::SchedConfig& cfg,
               Batch* out);
  const sched::UsageMap& usage() const { return usage_; }
  int64_t last_charge() const { return last_; }
  bool Charging(uint64_t id) const { return charging_.count(id) > 0; }

 private:
  void Reset(int64_t at, Batch* out);
  sched::UsageMap usage_;
  std::map<uint64_t, ChargeJob> charging_;  // jobs charged at the last Advance
  int64_t last_ = 0;
  int64_t last_reset_ = 0;
};

}  // namespace tessera::ctld
