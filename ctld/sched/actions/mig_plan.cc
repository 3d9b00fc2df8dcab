// The "migplan" action (dynamic MIG, MigStrategy=dynamic; runs after allocate, before
// backfill). It turns pending demand for MIG profiles that allocate could not place into
// MigReconfigs (ctld/sched/mig_planner.h) and makes the reconfiguration time part of the plan:
//  - GPUs with a reconfiguration in flight (MigGpuSnap::reconfig_until) and GPUs it re-lays now
//    are held on the timeline until the reconfiguration is expected to end (now +
//    SchedConfig::mig_reconfig_seconds for new ones), so backfill neither starts a job on an
//    instance about to be destroyed nor promises GPUs that are not there;
//  - the jobs served wait with reason "MigReconfiguring", expected_start = that end and
//    reserved_nodes = the node; backfill leaves them alone; a later cycle starts them on the new
//    instances once the node has answered.
// Demand: eligible jobs not started, with reason Resources/Priority (they did not fit), asking a
// MIG profile (a gpu_model that is a profile of some MIG model) or GPUs by need (--gpu-mem with
// no model: the smallest profile with enough memory among the MIG models of the dynamic GPUs of
// its candidate nodes, gpu_mem.h), with one task group, in job
// order, at most mig_plan_depth of them. A job on one node (nodes_min <= 1) asks all its
// instances on one node; a gang (nodes_min = N > 1) asks its per-node share (per_node GPUs +
// per_task GPUs x ceil(tasks / N), as placement spreads it) on each of N distinct nodes, all or
// nothing (MigDemand::node_count): either every node of the gang gets a layout holding its
// share, or nothing is re-laid for it. Candidate nodes: usable, in the job's partition, passing
// the session's predicates, with the job's CPUs and memory (a gang: its per-node share) free
// over its time limit; the first 64 such in node order (bounded, as sched_score_window), and at
// most 4 x 64 x mig_plan_depth node checks per cycle in all. A gang served waits with
// reserved_nodes = the nodes re-laid for it (a node whose existing free instances the planner
// counted for the gang is not re-laid and not held: if another job takes them meanwhile, the gang
// is planned again next cycle). GPUs are not switched into MIG mode (noded cannot do it without
// a GPU reset): allow_enable_mig is off here.
#include <algorithm>
#include <map>
#include <set>

#include "common/mig_profiles.h"
#include "ctld/sched/gpu_mem.h"
#include "ctld/sched/mig_planner.h"
#include "ctld/sched/registry.h"
#include "ctld/sched/session.h"

namespace tessera::sched {
namespace {

// Removes GPU `gpu`'s free units (whole or MIG instances) from `n` now and gives them back at
// `until`.
void HoldGpu(ClusterState& st, NodeRt& n, uint32_t gpu, int64_t until, bool only_free) {
  int64_t k = 0;
  auto is_gpu = [&](uint32_t pos) { return n.snap->gpus[pos].index == gpu; };
  auto is_free = [&](uint32_t p) {
    return std::find(n.free_gpus.begin(), n.free_gpus.end(), p) != n.free_gpus.end() ||
           std::find(n.free_mig.begin(), n.free_mig.end(), p) != n.free_mig.end();
  };
  if (only_free) {
    for (auto* list : {&n.free_gpus, &n.free_mig})
      for (auto it = list->begin(); it != list->end();) {
        if (is_gpu(*it)) {
          it = list->erase(it);
          ++k;
        } else {
          ++it;
        }
      }
    if (k) st.TakeNow(n, {0, 0, k});
  } else {
    for (uint32_t p = 0; p < n.snap->gpus.size(); ++p)
      k += is_gpu(p) && n.snap->gpus[p].healthy && !is_free(p);
  }
  if (k) st.AddEvent(n, until, {0, 0, k});
}

// The planner's view of `n`: a unit (whole GPU or instance) that the snapshot listed and that
// is not free now was taken by a job started in this cycle (or was never free).
MigPlanNode PlanView(const NodeRt& n) {
  MigPlanNode pn{n.snap->name, n.snap->mig_gpus};
  std::vector<char> free(n.snap->gpus.size(), 0);
  for (uint32_t p : n.free_gpus) free[p] = 1;
  for (uint32_t p : n.free_mig) free[p] = 1;
  std::vector<std::pair<uint32_t, const std::string*>> taken;
  for (uint32_t p = 0; p < n.snap->gpus.size(); ++p)
    if (!free[p]) taken.push_back({n.snap->gpus[p].index, &n.snap->gpus[p].mig_uuid});
  auto is_taken = [&](uint32_t gpu, const std::string& uuid) {
    for (const auto& [i, u] : taken)
      if (i == gpu && *u == uuid) return true;
    return false;
  };
  for (auto& g : pn.gpus) {
    if (g.reconfig_until > 0 || !g.reconfig_for.empty()) g.busy = true;
    if (is_taken(g.index, "")) g.busy = true;
    for (auto& i : g.instances) i.free = i.free && !is_taken(g.index, i.uuid);
  }
  return pn;
}

bool AnyDynamic(const NodeSnap& n) {
  for (const auto& g : n.mig_gpus)
    if (g.dynamic) return true;
  return false;
}

class MigPlanAction : public Action {
 public:
  explicit MigPlanAction(const SchedConfig& c)
      : reconfig_seconds_(c.mig_reconfig_seconds), depth_(c.mig_plan_depth) {}
  std::string Name() const override { return "migplan"; }

  void Execute(Session& s) override {
    ClusterState& st = s.state();
    std::vector<uint32_t> cands;  // usable nodes with a dynamic MIG GPU (state indices)
    for (auto& n : st.nodes()) {
      if (n.snap->mig_gpus.empty()) continue;
      for (const auto& g : n.snap->mig_gpus) {
        if (g.reconfig_until == 0 && g.reconfig_for.empty()) continue;
        int64_t until = std::max(g.reconfig_until, s.now() + 1);
        HoldGpu(st, n, g.index, until, false);
        for (uint64_t id : g.reconfig_for) AddWait(in_flight_[id], until, n.snap->name);
      }
      if (n.usable && AnyDynamic(*n.snap)) cands.push_back(n.index);
    }
    if (cands.empty() && in_flight_.empty()) return;  // no MIG planning here: O(nodes) only
    std::vector<MigDemand> demand;
    std::map<uint64_t, JobInfo*> by_id;
    for (JobInfo* j : s.OrderedEligible()) {
      auto f = in_flight_.find(j->snap->id);
      if (f != in_flight_.end()) {
        Wait(s, *j, f->second);
        continue;
      }
      if (cands.empty() || demand.size() >= depth_ || checks_ >= CheckBudget()) continue;
      auto d = Demand(s, *j, cands);
      if (d.count == 0) continue;
      demand.push_back(std::move(d));
      by_id[j->snap->id] = j;
    }
    if (demand.empty()) return;
    // The planner sees only the nodes some demand may use (views copy every MIG instance).
    std::vector<MigPlanNode> view;
    std::vector<int> pos(cands.size(), -1);
    for (auto& d : demand)
      for (auto& p : d.nodes) {
        if (pos[p] < 0) {
          pos[p] = static_cast<int>(view.size());
          view.push_back(PlanView(st.nodes()[cands[p]]));
        }
        p = static_cast<uint32_t>(pos[p]);
      }
    auto plan = PlanMig(view, demand, {.allow_enable_mig = false});
    int64_t until = s.now() + std::max<int64_t>(1, reconfig_seconds_);
    std::map<uint64_t, WaitInfo> served;
    for (auto& r : plan) {
      NodeRt* n = st.FindNode(r.node);
      if (n) HoldGpu(st, *n, r.gpu_index, until, true);
      for (uint64_t id : r.for_jobs)
        if (by_id.count(id)) AddWait(served[id], until, r.node);
      s.result().mig_reconfigs.push_back(std::move(r));
    }
    for (auto& [id, w] : served) Wait(s, *by_id[id], w);
  }

 private:
  static bool Retryable(const std::string& reason) {
    return reason.empty() || reason == "Priority" || reason == "Resources";
  }

  // When a job's reconfigurations end and the nodes they touch (several for a gang).
  struct WaitInfo {
    int64_t until = 0;
    std::vector<std::string> nodes;
  };
  static void AddWait(WaitInfo& w, int64_t until, const std::string& node) {
    w.until = std::max(w.until, until);
    if (std::find(w.nodes.begin(), w.nodes.end(), node) == w.nodes.end()) w.nodes.push_back(node);
  }
  static void Wait(Session& s, JobInfo& j, const WaitInfo& w) {
    j.reason = "MigReconfiguring";
    Decision& d = s.decision(j);
    d.expected_start = w.until;
    d.reserved_nodes = w.nodes;
  }

  // The job as planner demand (count 0: not one), its nodes as positions in `cands`: the first
  // kNodesPerDemand (in node order) in its partition, passing the predicates, with its CPUs and
  // memory free over its time limit (bounded like sched_score_window: O(window), not O(nodes)).
  MigDemand Demand(Session& s, JobInfo& j, const std::vector<uint32_t>& cands) {
    MigDemand d;
    d.count = 0;
    const JobSnap& js = *j.snap;
    if (!Retryable(j.reason) || js.groups.size() != 1) return d;
    const GroupReq& g = js.groups[0];
    std::string profile =
        g.per_task.gpu_model.empty() ? g.per_node.gpu_model : g.per_task.gpu_model;
    // --gpu-mem with no model (gpu_mem.h): the smallest fitting profile of the nodes' GPUs.
    uint64_t by_need = profile.empty() && AsksGpuMem(js) ? JobGpuMem(js) : 0;
    if (!by_need && !IsMigProfileName(profile)) return d;
    uint32_t nodes = std::max<uint32_t>(1, js.nodes_min);
    if (js.nodes_max && js.nodes_max < nodes) return d;
    // Per node: everything (one node), or the share placement gives each node of a gang.
    uint32_t tasks = nodes == 1 ? g.count : (g.count + nodes - 1) / nodes;
    if (g.tasks_per_node && nodes > 1) tasks = std::min(tasks, g.tasks_per_node);
    int64_t cpus = j.total.cpus, mem = j.total.mem;
    if (nodes > 1) {
      cpus = int64_t{std::max<uint32_t>(1, g.per_task.cpus)} * tasks + g.per_node.cpus;
      mem = static_cast<int64_t>(g.per_task.mem_mib * tasks + g.per_node.mem_mib);
    }
    for (uint32_t c = 0; c < cands.size() && d.nodes.size() < kNodesPerDemand; ++c) {
      ++checks_;
      const NodeRt& n = s.state().nodes()[cands[c]];
      if (std::find(n.partitions.begin(), n.partitions.end(), static_cast<uint32_t>(j.partition)) ==
              n.partitions.end() ||
          !s.NodeOk(j, n))
        continue;
      Amount a = ClusterState::MinAvail(n, s.now(), s.now() + j.time_limit);
      if (a.cpus < cpus || a.mem < mem) continue;
      d.nodes.push_back(c);
    }
    if (d.nodes.size() < nodes) return d;
    if (by_need && (profile = ByNeedProfile(s, cands, d.nodes, by_need)).empty()) {
      d.nodes.clear();
      return d;
    }
    d.job_id = js.id;
    d.profile = profile;
    d.node_count = nodes;
    d.count = nodes == 1 ? g.per_task.gpus * g.count + g.per_node.gpus
                         : g.per_task.gpus * tasks + g.per_node.gpus;
    return d;
  }

  // The smallest profile (by memory) with at least `mem` MiB among the MIG models of the dynamic
  // GPUs of `nodes` (positions in `cands`); "" when none has one.
  static std::string ByNeedProfile(Session& s, const std::vector<uint32_t>& cands,
                                   const std::vector<uint32_t>& nodes, uint64_t mem) {
    std::string best;
    std::set<std::string> seen;
    for (uint32_t c : nodes)
      for (const auto& g : s.state().nodes()[cands[c]].snap->mig_gpus) {
        if (!g.dynamic || !seen.insert(g.mig_model).second) continue;
        std::string p = SmallestMigProfileFor(g.mig_model, mem);
        if (!p.empty() && (best.empty() || MigProfileMemoryMiB(p) < MigProfileMemoryMiB(best) ||
                           (MigProfileMemoryMiB(p) == MigProfileMemoryMiB(best) && p < best)))
          best = p;
      }
    return best;
  }

  static constexpr size_t kNodesPerDemand = 64;
  // Node checks per cycle: when the MIG nodes are full, jobs find no node after scanning all of
  // them; this bounds that work (4 x the checks of mig_plan_depth jobs finding their window).
  uint64_t CheckBudget() const { return uint64_t{depth_} * kNodesPerDemand * 4; }
  uint64_t checks_ = 0;
  int64_t reconfig_seconds_;
  uint32_t depth_;
  std::map<uint64_t, WaitInfo> in_flight_;  // job -> reconfigurations sent for it
};

}  // namespace

void RegisterMigPlanAction(Registry& r) {
  r.AddAction("migplan", [](const SchedConfig& c) -> Result<std::unique_ptr<Action>> {
    return std::unique_ptr<Action>(new MigPlanAction(c));
  });
}

}  // namespace tessera::sched
