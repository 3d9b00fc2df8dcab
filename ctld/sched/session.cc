#include "ctld/sched/session.h"

#include <algorithm>

#include "ctld/sched/priority.h"

namespace tessera::sched {

Session::Session(const ClusterSnapshot& snap, const SchedConfig& cfg)
    : snap_(snap), cfg_(cfg), state_(snap), resv_(snap) {
  jobs_.resize(snap.pending.size());
  result_.decisions.resize(snap.pending.size());
  for (size_t i = 0; i < snap.pending.size(); ++i) {
    const JobSnap& js = snap.pending[i];
    JobInfo& j = jobs_[i];
    j.snap = &js;
    j.idx = static_cast<uint32_t>(i);
    j.partition = state_.PartitionId(js.partition);
    j.time_limit = EffectiveTimeLimit(js, j.partition >= 0 ? &state_.Partition(j.partition) : nullptr, cfg);
    for (const auto& g : js.groups) {
      j.total_tasks += g.count;
      j.total.cpus += int64_t{std::max<uint32_t>(1, g.per_task.cpus)} * g.count + g.per_node.cpus;
      j.total.gpus += int64_t{g.per_task.gpus} * g.count + g.per_node.gpus;
      j.total.mem += static_cast<int64_t>(g.per_task.mem_mib * g.count + g.per_node.mem_mib);
    }
    j.min_tasks = js.gang_min && js.gang_min < j.total_tasks ? js.gang_min : j.total_tasks;
    Decision& d = result_.decisions[i];
    d.job_id = js.id;
    if (!js.constraint.empty()) {
      auto c = ParseConstraint(js.constraint);
      if (c.ok()) j.constraint = *c;
      else j.reason = "BadConstraints";
    }
    if (!js.dependency.empty()) {
      auto dep = ParseDependency(js.dependency);
      if (dep.ok()) j.dependency = *dep;
      else j.reason = "DependencyNeverSatisfied";
    }
    if (j.partition < 0 && j.reason.empty()) j.reason = "PartitionConfig";
    if (!js.reservation.empty()) {  // issue 17 §1: a reservation deleted after the submit
      j.resv = resv_.Find(js.reservation);
      if (j.resv < 0 && j.reason.empty()) j.reason = "ReservationDeleted";
    }
  }
}

int Session::CompareJobs(const JobInfo& a, const JobInfo& b) const {
  for (const auto& f : job_order_)
    if (int c = f(a, b)) return c;
  if (a.snap->submit_time != b.snap->submit_time) return a.snap->submit_time < b.snap->submit_time ? -1 : 1;
  if (a.snap->id != b.snap->id) return a.snap->id < b.snap->id ? -1 : 1;
  return 0;
}

int Session::CompareQueues(const std::string& a, const std::string& b) const {
  for (const auto& f : queue_order_)
    if (int c = f(a, b)) return c;
  return a.compare(b) < 0 ? -1 : a == b ? 0 : 1;
}

std::string Session::Eligible(const JobInfo& j) const {
  for (const auto& f : eligible_) {
    std::string r = f(j);
    if (!r.empty()) return r;
  }
  return "";
}

std::string Session::Allocatable(const JobInfo& j) const {
  for (const auto& f : allocatable_) {
    std::string r = f(j);
    if (!r.empty()) return r;
  }
  return "";
}

bool Session::NodeOk(const JobInfo& j, const NodeRt& n) const {
  for (const auto& f : predicates_)
    if (!f(j, n)) return false;
  return true;
}

double Session::Score(const JobInfo& j, const NodeRt& n, const NodeFit& fit) const {
  double s = 0;
  for (const auto& [f, w] : scores_) s += w * f(j, n, fit);
  return s;
}

std::vector<std::vector<uint32_t>> Session::NodeSets(const JobInfo& j,
                                                     const std::vector<uint32_t>& nodes) const {
  // The first plugin that proposes sets wins; topology plugins will refine this.
  for (const auto& f : node_sets_) {
    auto sets = f(j, nodes);
    if (!sets.empty()) return sets;
  }
  return {nodes};
}

bool Session::GangReady(const JobInfo& j, uint32_t placed) const {
  if (gang_ready_.empty()) return placed >= j.total_tasks;
  for (const auto& f : gang_ready_)
    if (!f(j, placed)) return false;
  return true;
}

std::vector<uint64_t> Session::Victims(const JobInfo& j,
                                       const std::vector<const RunningSnap*>& c) const {
  if (victims_.empty()) return {};
  std::vector<uint64_t> out = victims_[0](j, c);
  std::sort(out.begin(), out.end());
  for (size_t i = 1; i < victims_.size(); ++i) {
    auto v = victims_[i](j, c);
    std::sort(v.begin(), v.end());
    std::vector<uint64_t> both;
    std::set_intersection(out.begin(), out.end(), v.begin(), v.end(), std::back_inserter(both));
    out = std::move(both);
  }
  return out;
}

void Session::NotifyAllocated(const JobInfo& j, const std::vector<NodePlacement>& p) const {
  for (const auto& f : on_allocated_) f(j, p);
}

std::vector<JobInfo*> Session::OrderedEligible() {
  size_t eligible = 0;
  for (const auto& j : jobs_) eligible += j.stage == JobInfo::Stage::kEligible;
  std::vector<JobInfo*> out;
  out.reserve(eligible);
  if (!order_.empty()) {
    for (JobInfo* j : order_)
      if (j->stage == JobInfo::Stage::kEligible) out.push_back(j);
    if (out.size() == eligible) return out;  // no job became eligible since the sort
    out.clear();
  }
  if (first_rank_ && eligible > 1) {  // sort (rank, job) pairs: no indirection per comparison
    const std::vector<uint32_t>& rank = first_rank_();
    std::vector<std::pair<uint32_t, JobInfo*>> keyed;
    keyed.reserve(eligible);
    for (auto& j : jobs_)
      if (j.stage == JobInfo::Stage::kEligible) keyed.push_back({rank[j.idx], &j});
    std::sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : CompareJobs(*a.second, *b.second) < 0;
    });
    for (const auto& [r, j] : keyed) out.push_back(j);
  } else {
    for (auto& j : jobs_)
      if (j.stage == JobInfo::Stage::kEligible) out.push_back(&j);
    std::sort(out.begin(), out.end(),
              [&](const JobInfo* a, const JobInfo* b) { return CompareJobs(*a, *b) < 0; });
  }
  order_ = out;
  return out;
}

}  // namespace tessera::sched
