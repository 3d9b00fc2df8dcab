// The reclaim action (issue 16 §2; the rules in queues.h): the preempt action's machinery
// (actions/preempt.cc) under a victim policy of deserved shares. A blocked eligible job whose
// account would stay within its deserved share looks for victims among running jobs of other
// accounts over theirs (any QoS or partition tier; PreemptMode and GraceTime of the victim's
// QoS, partition or cluster apply, CANCEL when none is set; PreemptExemptTime applies). The
// candidates are admitted cheapest first while the victims' accounts stay at or above their
// deserved share; of those, the fewest that make room are chosen (nobody when even all of them
// would not). Runs whatever PreemptType is; SchedulerParameters=preempt_depth bounds the searches.
#include <set>
#include <unordered_map>

#include "ctld/sched/actions/victim_policy.h"
#include "ctld/sched/queues.h"
#include "ctld/sched/session.h"

namespace tessera::sched {
namespace {

class ReclaimPolicy : public VictimPolicy {
 public:
  std::string ActionName() const override { return "reclaim"; }

  void Begin(Session& s) override {
    active_ = QueuesActive(s.config());
    if (!active_) return;
    std::vector<std::pair<const std::string*, QueueAmount>> demand;
    for (const auto& j : s.jobs())
      if (j.stage != JobInfo::Stage::kPending)
        demand.push_back({&j.snap->account, Requested(*j.snap, j.total)});
    table_.Build(s.config(), s.snapshot(), demand);
    for (auto& j : s.jobs())  // what allocate (and earlier actions) started in this cycle
      if (s.decision(j).kind == Decision::Kind::kStart)
        table_.Charge(table_.Find(j.snap->account), PlacedAmount(s.decision(j).placement));
    // Victims still ending (grace time) count as gone, their preemptor as running: a second
    // reclaimer of the same account must not take them again.
    std::unordered_map<uint64_t, const JobInfo*> by_id;
    for (const auto& r : s.snapshot().running)
      if (r.preempted_for) by_id[r.preempted_for] = nullptr;
    for (const auto& j : s.jobs())
      if (auto it = by_id.find(j.snap->id); it != by_id.end()) it->second = &j;
    for (const auto& r : s.snapshot().running) {
      if (!r.preempted_for) continue;
      table_.Charge(table_.Find(r.account), -HeldBy(r));
      auto it = by_id.find(r.preempted_for);
      if (!it->second || s.decision(*it->second).kind == Decision::Kind::kStart) continue;
      if (precharged_.insert(r.preempted_for).second)
        table_.Charge(table_.Find(it->second->snap->account), Requested(*it->second->snap, it->second->total));
    }
    at_begin_ = table_;
  }

  bool Wants(const JobInfo& j) override {
    if (!active_) return false;
    // As of Begin, whatever was chosen since; the account's own level only (its ancestors are
    // judged per victim, below the common one).
    int q = at_begin_.Find(j.snap->account);
    return q >= 0 && at_begin_.Starved(q, Requested(*j.snap, j.total), at_begin_.Parent(q));
  }

  void StartSearch(const JobInfo& j) override {
    table_.BeginSearch(table_.Find(j.snap->account), Requested(*j.snap, j.total));
  }

  bool Admit(const RunningSnap& r) override {
    return table_.VictimAllowed(table_.Find(r.account), HeldBy(r));
  }

  void Chosen(const JobInfo& j, const std::vector<const RunningSnap*>& victims) override {
    if (!precharged_.count(j.snap->id)) table_.Charge(table_.Find(j.snap->account), Requested(*j.snap, j.total));
    for (const RunningSnap* r : victims) table_.Charge(table_.Find(r->account), -HeldBy(*r));
  }

 private:
  bool active_ = false;
  QueueTable table_;
  QueueTable at_begin_;  // table_ when Begin ended: what Wants judges by
  std::set<uint64_t> precharged_;  // preemptors charged for their victims still ending
};

}  // namespace

std::unique_ptr<VictimPolicy> MakeReclaimPolicy(const SchedConfig&) {
  return std::make_unique<ReclaimPolicy>();
}

}  // namespace tessera::sched
