#include "ctld/sched/scheduler.h"

#include "ctld/sched/assoc.h"
#include "ctld/sched/gpu_mem.h"
#include "ctld/sched/gpu_share.h"
#include "ctld/sched/queues.h"
#include "ctld/sched/reservation.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "ctld/sched/session.h"

namespace tessera::sched {

CycleResult RunCycle(const ClusterSnapshot& snap, const SchedConfig& cfg, const Registry& registry,
                     const std::function<int64_t()>& micros) {
  Session s(snap, cfg);
  std::vector<std::unique_ptr<Plugin>> plugins;
  std::vector<std::unique_ptr<Action>> actions;
  std::vector<std::string> plugin_names = cfg.plugins, action_names = cfg.actions;
  if (QueuesActive(cfg)) QueueSteps(plugin_names, action_names);  // issue 16 §2 (queues.h)
  for (const auto& name : plugin_names) {
    auto p = registry.MakePlugin(name, cfg);
    if (!p.ok()) {
      CycleResult r;
      r.status = p.status();
      return r;
    }
    plugins.push_back(std::move(*p));
  }
  for (const auto& name : action_names) {
    auto a = registry.MakeAction(name, cfg);
    if (!a.ok()) {
      CycleResult r;
      r.status = a.status();
      return r;
    }
    actions.push_back(std::move(*a));
  }
  for (auto& p : plugins) p->OnSessionOpen(s);
  for (auto& a : actions) {
    int64_t t0 = micros ? micros() : 0;
    a->Execute(s);
    if (a->Name() != "backfill") continue;
    s.result().backfill_ran = true;
    if (micros) s.result().backfill_us += micros() - t0;
  }
  for (auto& p : plugins) p->OnSessionClose(s);
  CycleResult& r = s.result();
  r.jobs_considered = snap.pending.size();
  for (auto& j : s.jobs()) {
    Decision& d = s.decision(j);
    if (d.kind == Decision::Kind::kStart) continue;
    d.reason = j.reason.empty() ? "Priority" : j.reason;
  }
  return std::move(r);
}

CycleResult RunCycle(const ClusterSnapshot& snap) {
  static_assert(sizeof(SchedConfig) > 0);
  SchedConfig cfg;
  return RunCycle(snap, cfg, Registry::Builtin());
}

namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Names the part of `job` that no node of the partition could ever hold.
Status Diagnose(const JobSnap& job, const std::vector<const NodeSnap*>& cands) {
  for (const auto& g : job.groups) {
    bool cpu = false, mem = false, gpu = false;
    std::string model = g.per_task.gpu_model.empty() ? g.per_node.gpu_model : g.per_task.gpu_model;
    uint64_t gmem = std::max(g.per_task.gpu_mem_mib, g.per_node.gpu_mem_mib);
    for (const NodeSnap* n : cands) {
      cpu |= n->cpus_total >= std::max<uint32_t>(1, g.per_task.cpus) + g.per_node.cpus;
      mem |= n->mem_total >= g.per_task.mem_mib + g.per_node.mem_mib;
      uint32_t have = 0;
      for (const auto& gp : n->gpus)
        have += gmem ? GpuUnitMemMib(gp) >= gmem && (model.empty() || gp.model == model)
                     : GpuUnitMatches(model, gp.model, !gp.mig_uuid.empty());
      gpu |= have >= g.per_task.gpus + g.per_node.gpus;
    }
    std::string what = "task group " + (g.name.empty() ? std::string("main") : g.name);
    if (!cpu) return InvalidArgument("CPU count per task can never be satisfied in partition " + job.partition + " (" + what + ")");
    if (!mem) return InvalidArgument("memory request can never be satisfied in partition " + job.partition + " (" + what + ")");
    if (!gpu && gmem)
      return InvalidArgument("GPU request (gres/gpu" + (model.empty() ? "" : ":" + model) +
                             " with --gpu-mem=" + std::to_string(gmem) +
                             "M) can never be satisfied in partition " + job.partition +
                             ": no node has enough GPUs or MIG instances with that much memory (" +
                             what + ")");
    if (!gpu)
      return InvalidArgument("GPU request (gres/gpu" + (model.empty() ? "" : ":" + model) +
                             ") can never be satisfied in partition " + job.partition + " (" + what + ")");
  }
  return InvalidArgument("requested node configuration is not available in partition " + job.partition +
                         " (total CPUs, memory or GPUs of the job exceed what its nodes have)");
}

}  // namespace

Status CheckSatisfiable(const JobSnap& job, const ClusterSnapshot& empty) {
  auto part = std::find_if(empty.partitions.begin(), empty.partitions.end(),
                           [&](const PartitionSnap& p) { return p.name == job.partition; });
  if (part == empty.partitions.end()) return InvalidArgument("invalid partition specified: " + job.partition);
  if (part->max_nodes && job.nodes_min > part->max_nodes)
    return InvalidArgument("requested " + std::to_string(job.nodes_min) + " nodes but partition " +
                           job.partition + " allows at most " + std::to_string(part->max_nodes));
  for (const auto& n : job.nodelist) {
    auto it = std::find_if(empty.nodes.begin(), empty.nodes.end(), [&](const NodeSnap& s) { return s.name == n; });
    if (it == empty.nodes.end()) return InvalidArgument("invalid node name specified: " + n);
    if (!Contains(it->partitions, job.partition))
      return InvalidArgument("node " + n + " is not in partition " + job.partition);
  }
  if (!job.constraint.empty()) {
    auto c = ParseConstraint(job.constraint);
    if (!c.ok()) return InvalidArgument("invalid feature specification: " + c.status().message());
    for (const auto& f : c->Features()) {
      bool known = false;
      for (const auto& n : empty.nodes) known |= Contains(n.features, f);
      if (!known) return InvalidArgument("invalid feature specification: no node has feature \"" + f + "\"");
    }
  }
  // Every node idle and up, the job alone, no lifecycle or limits: only placement is asked.
  ClusterSnapshot probe;
  probe.now = empty.now;
  probe.partitions = {*part};
  probe.partitions[0].up = true;
  probe.partitions[0].max_time = -1;
  std::vector<const NodeSnap*> cands;
  // Nodes without GPUs that agree on everything placement reads (CPUs, memory, partitions,
  // features, weight) are interchangeable in this probe: with a flat topology and no node
  // names asked, keep at most as many of each kind as the job could use (its tasks, or its node
  // range). At 10,000 identical nodes the probe (copied and cycled for every submission) was
  // most of a submission's cost (issue 20 §2).
  uint64_t usable = std::max<uint64_t>(job.nodes_min, job.nodes_max);
  for (const auto& g : job.groups) usable += g.count;
  bool fold = !empty.topology && job.nodelist.empty() && job.exclude.empty();
  std::map<std::tuple<uint32_t, uint64_t, std::vector<std::string>, std::vector<std::string>, uint32_t>,
           uint64_t> kinds;
  for (const auto& n : empty.nodes) {
    if (!Contains(n.partitions, job.partition)) continue;
    if (fold && n.gpus.empty() && n.mig_gpus.empty() && n.gpu_shares.empty() &&
        ++kinds[{n.cpus_total, n.mem_total, n.partitions, n.features, n.weight}] > usable)
      continue;
    NodeSnap c = n;
    c.schedulable = true;
    c.idle = true;
    c.cpus_free = c.cpus_total;
    c.mem_free = c.mem_total;
    for (auto& g : c.gpus) g.free = g.healthy = true;
    probe.nodes.push_back(std::move(c));
  }
  for (const auto& n : probe.nodes)
    if (!Contains(job.exclude, n.name)) cands.push_back(&n);
  TESSERA_RETURN_IF_ERROR(CheckShareRequest(job, cands));
  uint32_t need = std::max<uint32_t>(1, job.nodes_min);
  if (cands.size() < need)
    return InvalidArgument("requested node configuration is not available: partition " + job.partition +
                           " has " + std::to_string(cands.size()) + " usable nodes, job needs " +
                           std::to_string(need));
  JobSnap j = job;
  j.begin_time = 0;
  j.dependency.clear();
  j.hold_reason.clear();
  j.array_job_id = 0;
  j.qos.clear();
  j.gang_min = 0;
  j.reservation.clear();  // issue 17 §1: the probe has no reservations (checked by CheckSubmit)
  probe.pending = {j};
  SchedConfig cfg;
  cfg.actions = {"enqueue", "allocate"};
  cfg.plugins = {"gang", "predicates"};
  CycleResult r = RunCycle(probe, cfg, Registry::Builtin());
  if (!r.status.ok()) return r.status;
  const Decision& d = r.decisions[0];
  if (d.kind == Decision::Kind::kStart) return Status::Ok();
  if (d.reason == "BadConstraints")
    return InvalidArgument("invalid feature specification: no node of partition " + job.partition +
                           " matches \"" + job.constraint + "\"");
  return Diagnose(job, cands);
}

Status CheckSubmit(const JobSnap& job, const ClusterSnapshot& current, const SchedConfig& cfg,
                   const AssocIndex* assocs) {
  if (!job.dependency.empty()) {
    auto d = ParseDependency(job.dependency);
    if (!d.ok()) return InvalidArgument("invalid dependency: " + d.status().message());
  }
  TESSERA_RETURN_IF_ERROR(CheckAssocSubmit(job, current, cfg, assocs));  // issue 16 (assoc.h)
  if (!job.reservation.empty()) {  // issue 17 §1 (reservation.h)
    auto r = std::find_if(current.reservations.begin(), current.reservations.end(),
                          [&](const ReservationSnap& x) { return x.name == job.reservation; });
    if (r == current.reservations.end())
      return InvalidArgument("Requested reservation is invalid: no reservation named " + job.reservation);
    if (!ResvAccess(*r, job.user, job.account))
      return PermissionDenied("Access denied to requested reservation " + job.reservation +
                              " (user " + job.user + ", account " +
                              (job.account.empty() ? "(none)" : job.account) + ")");
  }
  if (cfg.qos.empty()) return Status::Ok();
  const QosConfig* q = cfg.FindQos(job.qos);
  if (!q) return InvalidArgument("invalid qos specification: " + (job.qos.empty() ? cfg.default_qos : job.qos));
  if (q->max_wall > 0 && job.time_limit > q->max_wall)
    return InvalidArgument("QOSMaxWallDurationPerJobLimit: time limit exceeds QOS " + q->name + " MaxWall");
  if (q->max_submit_jobs_per_user < 0) return Status::Ok();
  auto same = [&](const std::string& user, const std::string& qos) {
    return user == job.user && (qos.empty() ? cfg.default_qos : qos) == q->name;
  };
  int64_t n = 0;
  for (const auto& p : current.pending) n += same(p.user, p.qos);
  for (const auto& r : current.running) n += same(r.user, r.qos);
  if (n + 1 > q->max_submit_jobs_per_user)
    return ResourceExhausted("QOSMaxSubmitJobPerUserLimit: user " + job.user + " already has " +
                             std::to_string(n) + " jobs in QOS " + q->name + " (MaxSubmitJobsPerUser=" +
                             std::to_string(q->max_submit_jobs_per_user) + ")");
  return Status::Ok();
}

}  // namespace tessera::sched
