// Fair share in the controller (issue 16 §3): usage charged from running jobs (ctld/usage.h),
// persisted incrementally, the factor filled into each cycle's snapshot, and the tshare/tprio
// views.
#include <algorithm>
#include <map>

#include "ctld/controller.h"
#include "ctld/log.h"

namespace tessera::ctld {

void Controller::LoadUsage(const Recovered& rec) {
  Batch b;
  usage_.Load(rec.usage, rec.usage_last_charge, rec.usage_last_reset, clock_->Now(), *sched_cfg_,
              &b);
  store_->Commit(std::move(b), [](const Status& st) {
    if (!st.ok()) Log("fair-share usage not written: " + st.message());
  });
}

void Controller::ChargeUsage() {
  int64_t now = clock_->Now();
  std::map<std::string, sched::BillingWeights> weights;  // partition -> parsed weights
  for (const auto& [part, text] : sched_cfg_->tres_billing_weights) {
    auto w = sched::ParseBillingWeights(text);  // validated when the config was read
    if (w.ok()) weights[part] = *w;
  }
  std::vector<UsageLedger::ChargeJob> running;
  auto add = [&](const JobRecord& j, int64_t end) {
    auto w = weights.find(std::string(j.partition));
    double billing = sched::Billable(JobTres(j, nodes_),
                                     w == weights.end() ? sched::BillingWeights{} : w->second,
                                     sched_cfg_->priority_flags);
    running.push_back({j.job_id, std::string(j.spec.account), std::string(j.user), billing,
                       j.start_time, end});
  };
  for (const JobRecord* j : jobs_.active()) {
    JobState s = j->State();
    if (s == JobState::kRunning || s == JobState::kCompleting) add(*j, 0);
  }
  for (const auto& [id, j] : jobs_.jobs())  // ended since the last charge (short jobs too)
    if (IsFinished(j.State()) && j.start_time > 0 && j.end_time > usage_.last_charge())
      add(j, j.end_time);
  auto ended = [this](uint64_t id) -> int64_t {
    JobRecord* j = jobs_.Find(id);
    return j && j->end_time > 0 ? j->end_time : 0;
  };
  Batch b;
  usage_.Advance(now, running, ended, *sched_cfg_, &b);
  if (b.empty()) return;
  store_->Commit(std::move(b), [](const Status& st) {
    if (!st.ok()) Log("fair-share usage not written: " + st.message());
  });
}

std::vector<sched::ShareRow> Controller::Shares() {
  ChargeUsage();
  std::vector<std::pair<std::string, std::string>> extra;
  for (const JobRecord* j : jobs_.active())
    extra.emplace_back(std::string(j->spec.account), std::string(j->user));
  return sched::ComputeShares(*sched_cfg_, usage_.usage(), extra);
}

std::vector<Controller::PriorityRow> Controller::Priorities() {
  ChargeUsage();
  sched::ClusterSnapshot snap = SchedBridge::Snapshot(
      *cfg_, jobs_.jobs(), jobs_.active(), nodes_, clock_->Now(),
      [this](uint64_t id) { return jobs_.IsDurable(id); });
  sched::FillFairshare(snap, *sched_cfg_, usage_.usage());
  sched::PriorityContext ctx = sched::MakePriorityContext(snap, *sched_cfg_);
  std::map<std::string, const sched::PartitionSnap*> parts;
  for (const auto& p : snap.partitions) parts[p.name] = &p;
  std::vector<PriorityRow> out;
  for (const auto& j : snap.pending) {
    if (!j.hold_reason.empty()) continue;
    int64_t cpus = 0, gpus = 0;
    for (const auto& g : j.groups) {
      cpus += int64_t{std::max<uint32_t>(1, g.per_task.cpus)} * g.count + g.per_node.cpus;
      gpus += int64_t{g.per_task.gpus} * g.count + g.per_node.gpus;
    }
    auto t = parts.find(j.partition);
    const sched::PartitionSnap* part = t == parts.end() ? nullptr : t->second;
    PriorityRow r{j.id, j.partition, j.user, j.account, j.qos, {}, j.fairshare};
    r.factors = sched::MultifactorFactors(j, cpus, gpus, part ? part->priority_tier : 1,
                                          *sched_cfg_, ctx,
                                          sched::EffectiveTimeLimit(j, part, *sched_cfg_));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace tessera::ctld
