#pragma once
// Hierarchical queues (issue 16 §2): every account of the account tree is a queue with
//   Guarantee=  a guaranteed share (TRES: cpu, mem, gres/gpu), Kueue's nominalQuota, KAI's quota;
//   Limit=      a hard cap its jobs (with its children's) never exceed (reason AssocGrp*);
//   Weight=     its weight when idle capacity is shared out (KAI's over-quota weight; default
//               1; 0 = deserved share = guarantee only);
//   Reclaimable=no  capacity it borrowed is never reclaimed from it.
// Queues are active when some account sets one of them (QueuesActive). Then RunCycle adds the
// `queue` plugin (first) and the `reclaim` action (after allocate) unless SchedulerPlugins= /
// SchedulerActions= name them already (QueueSteps).
//
// Deserved share (per resource: CPUs, memory, GPU units, and nodes when some account sets
// node=; computed once per cycle). Sibling guarantees that sum over what the siblings share
// (the capacity at the top level; for children, the parent's effective guarantee, else what
// the parent's level shares) are scaled down in proportion first, with a warning:
//   capacity of the top level = the schedulable nodes' totals; of an account = its deserved.
//   Among siblings: want = min(allocated + pending demand, Limit); each first gets
//   min(Guarantee, want); what is left of the parent's capacity is then handed out by Weight
//   (water filling: an account never gets more than its want, what it cannot take goes to the
//   others), so deserved = guarantee + a weight-proportional part of what the others leave
//   unused, capped by the hard limit and by the demand. Children divide their parent's deserved
//   the same way (as KAI Scheduler's proportion plugin, Kueue's cohorts).
//   Allocated and demand count an account's own jobs and its children's; demand = the eligible
//   pending jobs' requests (JobInfo::total).
//
// Lending: jobs start on idle resources whatever their account's deserved share, up to Limit.
// The `queue` plugin orders the jobs of accounts that would stay within their deserved share
// first, and refuses a job its account's Limit (or an ancestor's) would not hold.
//
// Reclaim (actions/reclaim.cc, the preempt machinery): a job that did not start may take back
// capacity when, on the path from its account up to (not including) the lowest common ancestor
// with the victim's account, every account stays within its deserved share once it runs
// (Starved); a running job is a victim only if every account on the victim's path up to that
// ancestor is over its deserved share (in a resource the job asks) and stays at or above it
// after every victim chosen so far is gone (VictimAllowed), and no account on that path is
// Reclaimable=no. So a reclaimer never ends above its share and a victim's account never below
// its: two queues cannot evict each other back and forth.
#include <string>
#include <unordered_map>
#include <vector>

#include "ctld/sched/cluster_state.h"
#include "ctld/sched/decision.h"
#include "ctld/sched/sched_config.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sched {

// What queues count: CPUs, memory (MiB), GPU units and nodes. A job counts each node it runs
// on (as Slurm's GrpTRES=node); a pending job its minimum node count (at least 1). The node
// dimension is used only when some account sets node= in Guarantee= or Limit=.
struct QueueAmount {
  int64_t cpus = 0, mem = 0, gpus = 0, nodes = 0;
  QueueAmount& operator+=(const QueueAmount& o) {
    cpus += o.cpus, mem += o.mem, gpus += o.gpus, nodes += o.nodes;
    return *this;
  }
  QueueAmount operator-() const { return {-cpus, -mem, -gpus, -nodes}; }
};

// What a running job holds / a placement takes / a pending job asks, as queues count it.
QueueAmount HeldBy(const RunningSnap& r);
QueueAmount PlacedAmount(const std::vector<NodePlacement>& p);
QueueAmount Requested(const JobSnap& j, const Amount& total);

// Whether any account sets Guarantee=, Limit=, Weight= (not 1) or Reclaimable=no.
bool QueuesActive(const SchedConfig& c);
// Adds "queue" (first) to `plugins` and "reclaim" (after allocate) to `actions` unless present.
void QueueSteps(std::vector<std::string>& plugins, std::vector<std::string>& actions);

class QueueTable {
 public:
  // Builds the tree from cfg.accounts and every account a running or `demand` job names (an
  // unknown account is a top-level queue with no settings), charges running jobs to their
  // account and its ancestors, then computes deserved shares. `demand`: (account, request) of
  // each eligible pending job.
  void Build(const SchedConfig& cfg, const ClusterSnapshot& snap,
             const std::vector<std::pair<const std::string*, QueueAmount>>& demand);

  int Find(const std::string& account) const;  // -1 = unknown
  // Adds `a` (may be negative) to the allocation of account `q` and its ancestors.
  void Charge(int q, const QueueAmount& a);
  // The first hard limit (Limit=) on q's path that `add` would exceed, as an AssocGrp* reason;
  // "" = none.
  std::string OverLimit(int q, const QueueAmount& add) const;
  // Every account on q's path, below `stop` (-1 = through the top level), stays within its
  // deserved share with `add` more, in each resource `add` asks.
  bool Starved(int q, const QueueAmount& add, int stop = -1) const;
  int CommonAncestor(int a, int b) const;  // -1 = none (different top-level accounts)
  int Parent(int q) const { return q < 0 ? -1 : nodes_[size_t(q)].parent; }

  // Reclaim searches: Begin(reclaimer account, its request) then VictimAllowed for each
  // candidate in cost order; an allowed victim is counted against its accounts' surplus.
  void BeginSearch(int reclaimer, const QueueAmount& job);
  bool VictimAllowed(int victim_account, const QueueAmount& held);

  // The table as CycleResult::queues (parents first, siblings by name).
  std::vector<QueueShare> Shares() const;
  QueueShare Share(int q) const;  // one row of Shares() (depth 0)
  bool empty() const { return nodes_.empty(); }
  // Sibling guarantees over the capacity they share, scaled down (one line per level and
  // resource, e.g. "queues: the guarantees under org1 sum to gres/gpu=24, over the 16 there
  // are; scaled by 0.67"); empty when none.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Node {
    std::string name;
    int parent = -1;
    std::vector<int> children;
    const AccountConfig* cfg = nullptr;
    double guarantee[4] = {-1, -1, -1, -1}, limit[4] = {-1, -1, -1, -1};
    double effective[4] = {-1, -1, -1, -1};  // guarantee, scaled down when over capacity
    uint32_t weight = 1;
    bool reclaimable = true;
    double start[4] = {0, 0, 0, 0};     // allocated at cycle start
    double alloc[4] = {0, 0, 0, 0};     // allocated now (Charge)
    double pending[4] = {0, 0, 0, 0};
    double deserved[4] = {0, 0, 0, 0};
    double removed[4] = {0, 0, 0, 0};   // victims of the current search
  };
  int Add(const std::string& name, const SchedConfig& cfg);
  void Divide(const std::vector<int>& kids, const double cap[4]);
  void Scale(const std::vector<int>& kids, const double cap[4], const std::string& level);
  void ToArray(const QueueAmount& a, double out[4]) const;

  std::vector<Node> nodes_;
  std::unordered_map<std::string, int> index_;
  std::vector<int> tops_;
  int reclaimer_ = -1;
  double job_[4] = {0, 0, 0, 0};
  bool count_nodes_ = false;  // some account sets node= (else the node dimension is 0)
  std::vector<std::string> warnings_;
  std::vector<int> touched_;  // nodes with `removed` set in this search
};

}  // namespace tessera::sched
