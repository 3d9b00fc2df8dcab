// The built-in actions. enqueue decides which pending jobs are eligible this cycle (every
// plugin's eligibility vote must agree); allocate starts jobs in order and, per partition,
// stops at the first job that does not fit (the rest wait with reason Priority); backfill
// reserves the top bf_reservation_depth blocked jobs on the timeline and starts any later job
// that fits now without delaying a reservation. (reclaim: actions/preempt.cc + reclaim.cc.)
// Both first serve the oldest eligible jobs of each partition (bf_oldest, ServeOldest below).
#include <algorithm>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/mig_profiles.h"
#include "ctld/sched/gpu_mem.h"
#include "ctld/sched/placement.h"
#include "ctld/sched/registry.h"
#include "ctld/sched/session.h"
#include "ctld/sched/topology_place.h"

namespace tessera::sched {
namespace {

class EnqueueAction : public Action {
 public:
  std::string Name() const override { return "enqueue"; }
  void Execute(Session& s) override {
    for (auto& j : s.jobs()) {
      if (j.stage != JobInfo::Stage::kPending || !j.reason.empty()) continue;
      j.reason = s.Eligible(j);
      if (j.reason.empty()) j.stage = JobInfo::Stage::kEligible;
    }
  }
};

// A job asking a MIG profile that no node of its partition offers now can only start after a
// reconfiguration (the migplan action plans it and holds the GPU): it can neither start nor be
// reserved now, so allocate and backfill pass over it without scanning nodes (reason
// Resources) and it blocks nobody. So does a --gpu-mem job that no unit of its partition fits
// (gpu_mem.h: only a reconfiguration can serve it).
bool ProfileAbsent(Session& s, const JobInfo& j) {
  if (AsksGpuMem(*j.snap))
    return GpuMemCandidates(s.state(), j.partition, JobGpuMem(*j.snap), JobGpuMemFilter(*j.snap))
        .empty();
  std::string model;
  for (const auto& g : j.snap->groups) {
    const std::string& m = g.per_task.gpu_model.empty() ? g.per_node.gpu_model : g.per_task.gpu_model;
    if (!m.empty()) model = m;
  }
  return !s.state().PartitionHasModel(j.partition, model) && IsMigProfileName(model);
}

bool Retryable(const std::string& reason) {
  return reason.empty() || reason == "Priority" || reason == "Resources" || reason == "ReqNodeNotAvail" ||
         reason == "Topology" ||  // issue 15: TopologyMode=required (topology_place.h)
         reason == "Reservation" ||  // issue 17 §1 (reservation.h)
         reason == "ReqNodeNotAvail, Reserved for maintenance";
}

// Issue 17 §2, the starvation bound (SchedulerParameters=bf_oldest=N,bf_oldest_wait=S,
// sched_config.h): before the priority order, the N oldest eligible jobs of each partition
// (submit time, then id: the head of FCFS order, as EASY's) that have waited at least S seconds
// are served: each starts now if it fits without delaying a reservation, else it holds a
// reservation (Decision::oldest) that no job placed after it in this cycle may delay. A job its
// limits hold (Allocatable, a reservation not begun) or that cannot be placed at all this cycle
// (a MIG profile absent) is passed over, so the next oldest is served. Once a cycle: in
// allocate, or in backfill when allocate is not configured.
void ServeOldest(Session& s, bool backfill) {
  uint32_t n = s.config().bf_oldest;
  if (n == 0 || s.oldest_served()) return;
  s.oldest_served() = true;
  std::vector<JobInfo*> q;
  for (auto& j : s.jobs())
    if (j.stage == JobInfo::Stage::kEligible) q.push_back(&j);
  std::sort(q.begin(), q.end(), [](const JobInfo* a, const JobInfo* b) {
    if (a->snap->submit_time != b->snap->submit_time) return a->snap->submit_time < b->snap->submit_time;
    return a->snap->id < b->snap->id;
  });
  std::vector<uint32_t> served(s.state().PartitionCount(), 0);
  for (JobInfo* j : q) {
    uint32_t& done = served[static_cast<size_t>(j->partition)];
    if (done >= n || !Retryable(j->reason) || ProfileAbsent(s, *j)) continue;
    if (s.now() - j->snap->submit_time < s.config().bf_oldest_wait) continue;
    StartOutcome r = TryStartNow(s, *j, backfill);
    if (r == StartOutcome::kLimited) continue;
    ++done;
    if (r == StartOutcome::kNoResources && TryReserve(s, *j)) s.decision(*j).oldest = true;
  }
}

// Partitions where ServeOldest reserved a job this cycle: a job of such a partition that does
// not fit waits behind it (reason Priority, as behind a job of higher priority).
std::vector<bool> OldestHeld(Session& s) {
  std::vector<bool> held(s.state().PartitionCount(), false);
  if (s.config().bf_oldest == 0) return held;
  for (auto& j : s.jobs())
    if (j.stage == JobInfo::Stage::kReserved && s.decision(j).oldest)
      held[static_cast<size_t>(j.partition)] = true;
  return held;
}

class AllocateAction : public Action {
 public:
  std::string Name() const override { return "allocate"; }
  void Execute(Session& s) override {
    ServeOldest(s, false);
    std::vector<bool> blocked(s.state().PartitionCount(), false);
    std::vector<bool> behind = OldestHeld(s);
    for (JobInfo* j : s.OrderedEligible()) {
      if (blocked[static_cast<size_t>(j->partition)]) {
        j->reason = "Priority";
        continue;
      }
      ++s.result().allocate_depth;
      if (ProfileAbsent(s, *j)) {  // cannot start now (nor be reserved): no node scan
        j->reason = "Resources";
        continue;
      }
      if (TryStartNow(s, *j, false) == StartOutcome::kNoResources) {
        blocked[static_cast<size_t>(j->partition)] = true;
        if (behind[static_cast<size_t>(j->partition)] && j->reason == "Resources") j->reason = "Priority";
      }
    }
  }
};

class BackfillAction : public Action {
 public:
  explicit BackfillAction(const SchedConfig& c) : depth_(c.bf_reservation_depth) {}
  std::string Name() const override { return "backfill"; }
  void Execute(Session& s) override {
    ServeOldest(s, true);
    uint32_t reserved = 0;
    std::vector<bool> waiting_ahead = OldestHeld(s);
    std::unordered_set<std::string> unreservable;  // see Reserve
    CycleResult& stats = s.result();
    auto queue = s.OrderedEligible();
    stats.backfill_queue += queue.size();
    for (JobInfo* j : queue) {
      ++stats.backfill_depth;
      if (!Retryable(j->reason) || ProfileAbsent(s, *j)) continue;
      auto part = static_cast<size_t>(j->partition);
      ++stats.backfill_depth_try;
      StartOutcome r = TryStartNow(s, *j, true);
      if (r == StartOutcome::kStarted) unreservable.clear();
      if (r == StartOutcome::kStarted || r == StartOutcome::kLimited) continue;
      if (reserved < depth_ && Reserve(s, *j, unreservable)) {
        ++reserved;
        unreservable.clear();
        j->reason = waiting_ahead[part] ? "Priority" : j->reason;
      } else if (waiting_ahead[part] && j->reason == "Resources") {
        j->reason = "Priority";
      }
      waiting_ahead[part] = true;
    }
  }

 private:
  // TryReserve, remembering failures by shape (ShapeKey: what placement reads of a job) until
  // the next start or reservation (`unreservable`, cleared by the caller). Until then the
  // cluster state is the same, so a job of a failed shape would fail again: on a full cluster
  // every pending job tried, and failed, a reservation scanning every node (10,000 nodes x 100k
  // jobs, issue 20 §2). Jobs placed by topology or by GPU memory are not remembered.
  static bool Reserve(Session& s, JobInfo& j, std::unordered_set<std::string>& unreservable) {
    if (AsksGpuMem(*j.snap) || TopologyApplies(s, j)) return TryReserve(s, j);
    const std::string& key = ShapeKey(j);
    if (unreservable.count(key)) return false;
    if (TryReserve(s, j)) return true;
    unreservable.insert(key);
    return false;
  }

  uint32_t depth_;
};

}  // namespace

void RegisterBuiltinActions(Registry& r) {
  r.AddAction("enqueue", [](const SchedConfig&) -> Result<std::unique_ptr<Action>> {
    return std::unique_ptr<Action>(new EnqueueAction());
  });
  r.AddAction("allocate", [](const SchedConfig&) -> Result<std::unique_ptr<Action>> {
    return std::unique_ptr<Action>(new AllocateAction());
  });
  r.AddAction("backfill", [](const SchedConfig& c) -> Result<std::unique_ptr<Action>> {
    return std::unique_ptr<Action>(new BackfillAction(c));
  });
}

}  // namespace tessera::sched
