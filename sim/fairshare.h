#pragma once
// Fair share in tessera-sim (issue 16 §3): the same pure functions ctld uses
// (ctld/sched/fairshare.h) over virtual time, and a per-account share table over time.
//  - SimUsage charges each running job's association its billing (the partition's
//    TRESBillingWeights, else CPUs) for the time it ran, decays with PriorityDecayHalfLife, and
//    fills pending jobs' JobSnap::fairshare before each cycle (when PriorityWeightFairshare > 0).
//  - ShareTable: per window of `window_s` seconds from the first submission, each account's
//    fraction of the resource-seconds used in it (GPU-seconds when the cluster has GPUs, else
//    CPU-seconds), from the jobs' start/end.
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "ctld/sched/fairshare.h"
#include "sim/engine.h"

namespace tessera::sim {

class SimUsage {
 public:
  explicit SimUsage(const sched::SchedConfig& cfg);
  bool on() const { return on_; }
  // Charges `running` (all ran over (last, now]) and decays. Call before removing jobs ending now.
  void Advance(int64_t now, const std::map<uint64_t, sched::RunningSnap>& running);
  void Fill(sched::ClusterSnapshot& snap) const;

 private:
  const sched::SchedConfig& cfg_;
  bool on_ = false;
  std::map<std::string, sched::BillingWeights> weights_;
  sched::UsageMap usage_;
  int64_t last_ = -1;
};

// --accounts: which account each trace job charges. "group": as read (SWF: g<group id>; openb:
// the QoS class), "user": the user, "qos": the QoS, "user-mod:N": a<uid mod N> (SWF users are
// u<uid>; other names hash). Unknown modes are an error.
Status AssignAccounts(const std::string& mode, std::vector<TraceJob>& trace);

struct ShareTable {
  int64_t window_s = 0;
  std::vector<std::string> accounts;
  std::vector<std::vector<double>> rows;  // per window: share per account (same order)
  std::vector<double> mean_wait_s;        // per account, over its started jobs
  // issue 16 §2 (queues on, SimRun::queue_samples): per queue account its guarantee (units;
  // -1 none) and per window the time-weighted means of its allocation, deserved share and
  // borrowed units (allocated above the guarantee).
  std::vector<std::string> queue_accounts;
  std::vector<int64_t> guarantee;
  struct QueueCell {
    double allocated = 0, deserved = 0, borrowed = 0;
  };
  std::vector<std::vector<QueueCell>> queue_rows;  // per window, per queue account
};
ShareTable ComputeShareTable(const SimRun& run, int64_t window_s);
// Markdown: "| window | acct1 | acct2 | ..." with percentages; with queues a second table:
// "| window | acct (g=G) alloc/deserved/borrowed | ...".
void PrintShareTable(std::ostream& out, const std::string& label, const ShareTable& t);

}  // namespace tessera::sim
