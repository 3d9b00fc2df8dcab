#pragma once
// Session: one scheduling cycle's world. It holds the snapshot, the config, the mutable
// ClusterState, per-job working data (JobInfo) and the callbacks plugins registered. Actions
// read and change it; RunCycle turns it into a CycleResult at the end.
//
// Combination rules (as KAI/Volcano): job/queue orders take the first non-zero answer in
// plugin order; predicates, eligibility votes and allocatability checks AND (the first reason
// wins); node scores add, each multiplied by its weight; gang readiness ANDs; victim sets
// intersect.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "ctld/sched/cluster_state.h"
#include "ctld/sched/constraint.h"
#include "ctld/sched/decision.h"
#include "ctld/sched/dependency.h"
#include "ctld/sched/reservation.h"
#include "ctld/sched/sched_config.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sched {

struct JobInfo {
  enum class Stage { kPending, kEligible, kStarted, kReserved };
  const JobSnap* snap = nullptr;
  uint32_t idx = 0;            // position in snapshot.pending and in the decisions
  int partition = -1;
  int64_t time_limit = 0;      // effective, seconds
  int64_t priority = 0;
  Constraint constraint;
  Dependency dependency;
  uint32_t total_tasks = 0;
  uint32_t min_tasks = 0;      // gang minimum (all tasks when the job names none)
  Amount total;                // whole request (per-task mem estimated on the largest node)
  Stage stage = Stage::kPending;
  std::string reason;
  std::string shape;           // memo key; built on first use
  int resv = -1;               // issue 17 §1: its reservation in Session::resv(); -1 = none
};

using JobOrderFn = std::function<int(const JobInfo&, const JobInfo&)>;
using QueueOrderFn = std::function<int(const std::string&, const std::string&)>;
using EligibleFn = std::function<std::string(const JobInfo&)>;   // "" = yes, else a reason
using PredicateFn = std::function<bool(const JobInfo&, const NodeRt&)>;
// What a node score sees of one candidate node: its availability over the job's window
// [start, end) (end = start + time limit).
struct NodeFit {
  Amount avail;
  int64_t start = 0, end = 0;
};
using ScoreFn = std::function<double(const JobInfo&, const NodeRt&, const NodeFit&)>;
using NodeSetFn =
    std::function<std::vector<std::vector<uint32_t>>(const JobInfo&, const std::vector<uint32_t>&)>;
using GangReadyFn = std::function<bool(const JobInfo&, uint32_t placed_tasks)>;
using VictimFn = std::function<std::vector<uint64_t>(const JobInfo&, const std::vector<const RunningSnap*>&)>;
using AllocatedFn = std::function<void(const JobInfo&, const std::vector<NodePlacement>&)>;

class Session {
 public:
  Session(const ClusterSnapshot& snap, const SchedConfig& cfg);

  const ClusterSnapshot& snapshot() const { return snap_; }
  const SchedConfig& config() const { return cfg_; }
  ClusterState& state() { return state_; }
  // Advance reservations (issue 17 §1, reservation.h): which nodes a job may use when.
  ResvView& resv() { return resv_; }
  int64_t now() const { return snap_.now; }
  std::vector<JobInfo>& jobs() { return jobs_; }
  Decision& decision(const JobInfo& j) { return result_.decisions[j.idx]; }
  CycleResult& result() { return result_; }

  // Registration (plugins, in OnSessionOpen).
  // A job order must not change within the cycle (it may be computed lazily, at its first
  // call): OrderedEligible sorts once and reuses that order (issue 16, cycle time).
  void AddJobOrder(JobOrderFn f) {
    job_order_.push_back(std::move(f));
    order_.clear();
  }
  // A job order given as a rank per job (JobInfo::idx -> position, lower first), as the queue
  // and drf plugins compute it: the same as AddJobOrder comparing ranks, but when it is the
  // first order OrderedEligible sorts (rank, job) pairs, with no comparator call per
  // comparison (equal ranks fall back to CompareJobs). `rank` may build the ranks lazily.
  using JobRankFn = std::function<const std::vector<uint32_t>&()>;
  void AddJobRank(JobRankFn rank) {
    if (job_order_.empty()) first_rank_ = rank;
    AddJobOrder([rank](const JobInfo& a, const JobInfo& b) {
      const std::vector<uint32_t>& r = rank();
      uint32_t ra = r[a.idx], rb = r[b.idx];
      return ra == rb ? 0 : ra < rb ? -1 : 1;
    });
  }
  void AddQueueOrder(QueueOrderFn f) { queue_order_.push_back(std::move(f)); }
  void AddEligible(EligibleFn f) { eligible_.push_back(std::move(f)); }
  void AddAllocatable(EligibleFn f) { allocatable_.push_back(std::move(f)); }
  void AddPredicate(PredicateFn f) { predicates_.push_back(std::move(f)); }
  void AddNodeScore(ScoreFn f, double weight) { scores_.push_back({std::move(f), weight}); }
  void AddNodeSets(NodeSetFn f) { node_sets_.push_back(std::move(f)); }
  void AddGangReady(GangReadyFn f) { gang_ready_.push_back(std::move(f)); }
  void AddVictims(VictimFn f) { victims_.push_back(std::move(f)); }
  void AddOnAllocated(AllocatedFn f) { on_allocated_.push_back(std::move(f)); }

  // Combined callbacks (actions).
  int CompareJobs(const JobInfo& a, const JobInfo& b) const;
  int CompareQueues(const std::string& a, const std::string& b) const;
  std::string Eligible(const JobInfo& j) const;
  std::string Allocatable(const JobInfo& j) const;
  bool NodeOk(const JobInfo& j, const NodeRt& n) const;
  bool HasScores() const { return !scores_.empty(); }
  double Score(const JobInfo& j, const NodeRt& n, const NodeFit& fit) const;
  bool HasNodeSets() const { return !node_sets_.empty(); }
  std::vector<std::vector<uint32_t>> NodeSets(const JobInfo& j, const std::vector<uint32_t>& nodes) const;
  bool GangReady(const JobInfo& j, uint32_t placed) const;
  std::vector<uint64_t> Victims(const JobInfo& j, const std::vector<const RunningSnap*>& c) const;
  void NotifyAllocated(const JobInfo& j, const std::vector<NodePlacement>& p) const;

  // Eligible jobs sorted by CompareJobs (ties: submit time, then id). The first call sorts;
  // later calls filter that order (the same result: the order is total and fixed in a cycle),
  // unless a job has become eligible since, which sorts again.
  std::vector<JobInfo*> OrderedEligible();
  // Shape memo: placements that failed in this cycle (resources only shrink within a cycle).
  bool KnownToFail(const std::string& key) const { return failed_.count(key) > 0; }
  void RememberFailure(const std::string& key) { failed_.insert(key); }
  // bf_oldest (issue 17 §2, actions.cc ServeOldest): whether this cycle already served the
  // oldest eligible jobs (allocate or backfill, whichever ran first).
  bool& oldest_served() { return oldest_served_; }

 private:
  const ClusterSnapshot& snap_;
  const SchedConfig& cfg_;
  ClusterState state_;
  ResvView resv_;
  std::vector<JobInfo> jobs_;
  CycleResult result_;
  std::vector<JobOrderFn> job_order_;
  std::vector<QueueOrderFn> queue_order_;
  std::vector<EligibleFn> eligible_, allocatable_;
  std::vector<PredicateFn> predicates_;
  std::vector<std::pair<ScoreFn, double>> scores_;
  std::vector<NodeSetFn> node_sets_;
  std::vector<GangReadyFn> gang_ready_;
  std::vector<VictimFn> victims_;
  std::vector<AllocatedFn> on_allocated_;
  std::unordered_set<std::string> failed_;
  std::vector<JobInfo*> order_;  // OrderedEligible's last full sort
  JobRankFn first_rank_;         // AddJobRank when it gave the first job order
  bool oldest_served_ = false;
};

}  // namespace tessera::sched
