#include "ctld/sched_bridge.h"

#include <algorithm>

#include "common/hostlist.h"
#include "ctld/gpu_shares.h"
#include "ctld/nodes/gpu_use.h"
#include "ctld/topology_live.h"
#include "ctld/sched_bridge_mig.h"

namespace tessera::ctld {
namespace {

sched::Req ToReq(const ResourceReq& r) {
  return {r.cpus, r.mem_mib, r.gpus, r.gpu_model, r.mps, r.shards, r.gpu_mem_mib, r.share_model};
}

std::vector<std::string> Expand(const std::string& expr) {
  auto r = ExpandHostlist(expr);
  return r.ok() ? *r : std::vector<std::string>{};
}

sched::NodeSnap NodeSnapFor(const NodeConfig& c) {
  sched::NodeSnap s;
  s.name = c.name;
  s.cpus_total = s.cpus_free = c.cpus;
  s.mem_total = s.mem_free = c.real_memory_mib;
  s.partitions = c.partitions;
  s.features = c.features;
  s.weight = c.weight;
  uint32_t idx = 0;
  for (const auto& [model, count] : c.gres_gpus)
    for (uint32_t i = 0; i < count; ++i) s.gpus.push_back({idx++, model, true, true, ""});
  return s;
}

sched::RunningSnap ToRunning(const JobRecord& j) {
  sched::RunningSnap r;
  r.id = j.job_id;
  r.name = j.spec.name;
  r.user = j.user;
  r.account = j.spec.account;
  r.qos = j.spec.qos;
  r.partition = j.partition;
  r.array_job_id = j.array_job_id;
  r.start_time = j.start_time;
  // Suspended time does not count toward the limit (noded pushes the deadline on resume).
  r.end_time = j.time_limit_s < 0 ? sched::kNever : j.start_time + j.time_limit_s + j.suspended_s;
  for (const auto& a : j.alloc)
    r.nodes.push_back({a.node, a.cpus, a.mem_mib,
                       static_cast<uint32_t>(a.gpu_indices.size() + a.mig_uuids.size()),
                       a.gpu_indices, a.mig_uuids});
  // issue 16 §4: victim selection
  r.priority = j.priority;
  r.preemptable = j.State() == JobState::kRunning && !j.cancel_requested && !j.requeue_requested &&
                  std::none_of(j.alloc.begin(), j.alloc.end(), IsShareAlloc);
  return r;
}

}  // namespace

sched::JobSnap SchedBridge::ToSnap(const JobRecord& j) {
  sched::JobSnap s;
  s.id = j.job_id;
  s.partition = j.partition;
  s.priority = j.priority;  // admin-set; 0 = the multifactor formula decides
  s.submit_time = j.submit_time;
  for (const auto& g : j.spec.task_groups)
    s.groups.push_back({g.name, g.count, ToReq(g.per_task), g.tasks_per_node, ToReq(g.per_node)});
  s.nodes_min = j.spec.nodes_min;
  s.nodes_max = j.spec.nodes_max;
  s.exclusive = j.spec.exclusive;
  s.nodelist = Expand(j.spec.nodelist);
  s.exclude = Expand(j.spec.exclude);
  s.begin_time = j.spec.begin_time;
  s.name = j.spec.name;
  s.user = j.user;
  s.account = j.spec.account;
  s.qos = j.spec.qos;
  s.gang_min = j.spec.gang_min;
  s.time_limit = j.time_limit_s < 0 ? 0 : j.time_limit_s;
  s.eligible_time = j.eligible_time;
  s.nice = j.spec.nice;
  s.constraint = j.spec.constraint;
  s.dependency = j.spec.dependency;
  if (j.held) s.hold_reason = "JobHeldUser";
  s.array_job_id = j.array_job_id;
  s.array_task_id = j.array_task_id;
  s.array_max_running = j.array_max_running;
  s.switches = j.spec.switches;  // topology (issue 15)
  s.switches_wait_s = SwitchWaitSeconds(j.spec);
  s.segment = j.spec.segment;
  s.reservation = j.spec.reservation;  // issue 17 §1
  return s;
}

sched::ClusterSnapshot SchedBridge::EmptyCluster(const ClusterConfig& cfg,
                                                 TopologyPtr topology) {
  sched::ClusterSnapshot s;
  s.topology = std::move(topology);
  for (const auto& n : cfg.nodes) {
    s.nodes.push_back(NodeSnapFor(n));
    FillGpuMemory(s.nodes.back(), cfg);
    auto g = cfg.gpus.find(n.name);
    if (g != cfg.gpus.end()) FillConfigSharePools(s.nodes.back(), g->second);
  }
  for (const auto& p : cfg.partitions) {
    s.partitions.push_back({p.name, p.up, p.max_nodes, p.max_time_s, p.default_time_s, p.priority_tier});
    s.partitions.back().topology_required = p.topology_required;
  }
  return s;
}

sched::ClusterSnapshot SchedBridge::Snapshot(const ClusterConfig& cfg,
                                             const std::map<uint64_t, JobRecord>& jobs,
                                             const std::vector<const JobRecord*>& active,
                                             NodeTable& nodes, int64_t now,
                                             const std::function<bool(uint64_t)>& durable,
                                             TopologyPtr topology) {
  sched::ClusterSnapshot s = EmptyCluster(cfg, std::move(topology));
  s.now = now;
  for (auto& ns : s.nodes) {
    NodeRuntime* rt = nodes.Find(ns.name);
    ns.schedulable = rt && rt->Schedulable();
    if (!rt) continue;
    ns.cpus_free -= std::min(ns.cpus_free, rt->alloc_cpus);
    ns.mem_free -= std::min(ns.mem_free, rt->alloc_mem);
    ns.idle = rt->jobs.empty();
    if (!rt->gpus.empty()) {  // what the node reported wins over gres config
      ns.gpus = ReportedGpus(*rt, false);
      FillGpuMemory(ns, cfg);
      FillSharePools(ns, *rt);
      continue;
    }
    for (auto& g : ns.gpus)
      if (std::count(rt->alloc_gpus.begin(), rt->alloc_gpus.end(), g.index)) g.free = false;
  }
  // Held jobs keep their JobHeld* reason and cannot start: leaving them out keeps cycles
  // proportional to the jobs that can actually run. They stay in when some job has a
  // dependency (which may name a held job); so do the finished jobs, which only dependencies
  // look at (until MinJobAge purges them they would otherwise make every cycle O(all jobs)).
  bool with_held = std::any_of(active.begin(), active.end(), [](const JobRecord* j) {
    return j->State() == JobState::kPending && !j->spec.dependency.empty();
  });
  std::vector<std::pair<size_t, const JobRecord*>> shared;  // running share jobs
  auto add = [&](const JobRecord& j) {
    if (!durable(j.job_id)) return;
    switch (j.State()) {
      case JobState::kPending:
        if (with_held || !j.held) s.pending.push_back(ToSnap(j));
        break;
      case JobState::kRunning:
      case JobState::kSuspended:
      case JobState::kCompleting:
        if (std::any_of(j.alloc.begin(), j.alloc.end(), IsShareAlloc))
          shared.emplace_back(s.running.size(), &j);
        s.running.push_back(ToRunning(j));
        break;
      default:
        if (with_held)
          s.finished.push_back({j.job_id, j.State() == JobState::kCompleted && j.exit_code == 0});
    }
  };
  if (with_held) {
    for (const auto& [id, j] : jobs) add(j);
  } else {
    for (const JobRecord* j : active) add(*j);
  }
  AddShareReleases(s.running, shared);
  return s;
}

bool SchedBridge::StillFits(const std::vector<sched::NodePlacement>& placement, NodeTable& nodes) {
  for (const auto& p : placement) {
    NodeRuntime* n = nodes.Find(p.node);
    if (!n || !n->Schedulable()) return false;
    if (n->alloc_cpus + p.cpus > n->config->cpus) return false;
    if (n->alloc_mem + p.mem_mib > n->config->real_memory_mib) return false;
    for (uint32_t g : p.gpu_indices) {
      if (std::count(n->alloc_gpus.begin(), n->alloc_gpus.end(), g)) return false;
      for (const auto& gs : n->gpus)  // sliced since the snapshot: no longer usable whole
        if (gs.index == g && gs.mig_enabled) return false;
    }
    for (const auto& u : p.mig_uuids)  // the instance still exists and nobody holds it
      if (MigHolder(*n, u) || !GpuOfMig(*n, u)) return false;
    if (!SharesStillFit(p, *n)) return false;
  }
  return true;
}

std::vector<sched::GpuSnap> SchedBridge::ReportedGpus(const NodeRuntime& rt, bool all_free) {
  std::vector<sched::GpuSnap> out;
  for (const auto& g : rt.gpus) {
    // Held whole (a job placed before the GPU entered MIG mode): none of its units is free.
    bool held = !all_free && std::count(rt.alloc_gpus.begin(), rt.alloc_gpus.end(), g.index) > 0;
    if (!g.mig_enabled) {
      out.push_back({g.index, g.model, !held, g.healthy, "", g.memory_mib});
      continue;
    }
    for (const auto& m : g.mig)
      out.push_back({g.index, m.profile, all_free || (!held && MigHolder(rt, m.uuid) == 0),
                     g.healthy, m.uuid});
  }
  return out;
}

std::vector<NodeAlloc> SchedBridge::ToAlloc(const std::vector<sched::NodePlacement>& placement,
                                            NodeTable* nodes) {
  std::vector<NodeAlloc> out;
  for (const auto& p : placement) {
    out.push_back({p.node, p.cpus, p.mem_mib, p.gpu_indices, p.tasks, p.mig_uuids, p.mps, p.shards});
    if (p.share_gpu >= 0) out.back().gpu_indices = {static_cast<uint32_t>(p.share_gpu)};
    if (nodes) SetMpsPercent(out.back(), nodes->Find(p.node));
  }
  return out;
}

}  // namespace tessera::ctld
