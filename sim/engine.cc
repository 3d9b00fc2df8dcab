#include "sim/engine.h"
#include "sim/reservations.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "sim/fairshare.h"
#include "sim/mig.h"
#include "sim/preempt.h"

namespace tessera::sim {

std::vector<sched::GroupReq> SpreadOverNodes(const TraceJob& t, uint32_t nodes) {
  // Task i gets total / nodes, plus one when i < total % nodes (per dimension): equal tasks
  // are consecutive, so they form at most four groups of one task per node.
  auto share = [nodes](uint64_t total, uint32_t i) { return total / nodes + (i < total % nodes ? 1 : 0); };
  std::vector<sched::GroupReq> out;
  for (uint32_t i = 0; i < nodes; ++i) {
    sched::Req r;
    r.cpus = std::max<uint32_t>(1, static_cast<uint32_t>(share(t.cpus, i)));
    r.mem_mib = share(t.mem_mib, i);
    r.gpus = static_cast<uint32_t>(share(t.gpus, i));
    r.gpu_model = t.gpu_model;
    const sched::Req* last = out.empty() ? nullptr : &out.back().per_task;
    if (last && last->cpus == r.cpus && last->mem_mib == r.mem_mib && last->gpus == r.gpus) {
      ++out.back().count;
      continue;
    }
    sched::GroupReq g;
    g.name = out.empty() ? "main" : "main" + std::to_string(out.size());
    g.count = 1;
    g.per_task = r;
    g.tasks_per_node = 1;
    out.push_back(g);
  }
  return out;
}

namespace {

sched::JobSnap ToSnap(const TraceJob& t, uint64_t id, const std::string& default_partition) {
  sched::JobSnap j;
  j.id = id;
  j.partition = t.partition.empty() ? default_partition : t.partition;
  j.submit_time = t.submit;
  j.user = t.user;
  j.account = t.account;
  j.qos = t.qos;
  j.name = "job" + std::to_string(t.id);
  j.time_limit = std::max<int64_t>(1, t.req_time > 0 ? t.req_time : t.runtime);
  j.constraint = t.constraint;
  uint32_t nodes = std::max<uint32_t>(1, t.nodes);
  sched::GroupReq g;
  g.name = "main";
  if (nodes > 1) {  // one task per node; the totals are spread without losing a unit
    j.groups = SpreadOverNodes(t, nodes);
    j.nodes_min = nodes;
    return j;
  } else if (t.gpus == 0 && t.mem_mib == 0) {  // CPU job (SWF): one task per CPU, any nodes
    g.count = t.cpus;
    g.per_task = {1, 0, 0, ""};
  } else {
    g.count = 1;
    g.per_task = {t.cpus, t.mem_mib, t.gpus, t.gpu_model};
  }
  j.groups.push_back(g);
  return j;
}

struct Live {
  std::vector<sched::NodeSnap> nodes;
  std::unordered_map<std::string, size_t> index;
  std::vector<uint32_t> jobs_on;
};

void Apply(Live& live, const std::vector<sched::NodePlacement>& p, bool take) {
  for (const auto& np : p) {
    sched::NodeSnap& n = live.nodes[live.index.at(np.node)];
    size_t i = live.index.at(np.node);
    if (take) {
      n.cpus_free -= std::min(n.cpus_free, np.cpus);
      n.mem_free -= std::min(n.mem_free, np.mem_mib);
      ++live.jobs_on[i];
    } else {
      n.cpus_free += np.cpus;
      n.mem_free += np.mem_mib;
      --live.jobs_on[i];
    }
    n.idle = live.jobs_on[i] == 0;
    for (auto& g : n.gpus)
      if (g.mig_uuid.empty() && std::count(np.gpu_indices.begin(), np.gpu_indices.end(), g.index))
        g.free = !take;
    MigLive::Use(n, np, take);
  }
}

// Whether `p` is free now on the live nodes (a preemptor's planned place, a resumed victim).
bool Fits(const Live& live, const std::vector<sched::NodePlacement>& p) {
  for (const auto& np : p) {
    const sched::NodeSnap& n = live.nodes[live.index.at(np.node)];
    if (n.cpus_free < np.cpus || n.mem_free < np.mem_mib) return false;
    for (const auto& g : n.gpus)
      if (g.mig_uuid.empty() && !g.free &&
          std::count(np.gpu_indices.begin(), np.gpu_indices.end(), g.index))
        return false;
  }
  return true;
}

int64_t PhysicalGpus(const sched::NodeSnap& n) {
  std::set<uint32_t> idx;
  for (const auto& g : n.gpus) idx.insert(g.index);
  for (const auto& g : n.mig_gpus) idx.insert(g.index);
  return static_cast<int64_t>(idx.size());
}

}  // namespace

SimRun Simulate(const sched::ClusterSnapshot& cluster, const std::string& default_partition,
                const sched::SchedConfig& cfg, const std::vector<TraceJob>& trace,
                const std::string& label, uint64_t gpu_mem_mib) {
  SimRun run;
  run.label = label;
  Live live{cluster.nodes, {}, std::vector<uint32_t>(cluster.nodes.size(), 0)};
  for (size_t i = 0; i < live.nodes.size(); ++i) {
    live.index[live.nodes[i].name] = i;
    run.total_cpus += live.nodes[i].cpus_total;
    run.total_gpus += PhysicalGpus(live.nodes[i]);
  }
  run.total_gpu_mem_mib = uint64_t(run.total_gpus) * gpu_mem_mib;
  sched::ClusterSnapshot empty = cluster;
  run.jobs.reserve(trace.size());
  for (size_t i = 0; i < trace.size(); ++i)
    run.jobs.push_back({trace[i], ToSnap(trace[i], i + 1, default_partition), -1, -1, 0, 0,
                        UsefulGpuMemMib(trace[i], gpu_mem_mib), "", {}});
  sched::Registry reg = sched::Registry::Builtin();
  std::vector<size_t> pending;
  std::map<uint64_t, sched::RunningSnap> running;
  std::map<uint64_t, std::vector<sched::NodePlacement>> placements;
  using End = std::pair<int64_t, size_t>;
  std::priority_queue<End, std::vector<End>, std::greater<End>> ends;
  using Reconf = std::pair<int64_t, size_t>;  // (done at, index in reconfs)
  std::priority_queue<Reconf, std::vector<Reconf>, std::greater<Reconf>> reconf_done;
  std::vector<sched::MigReconfig> reconfs;
  size_t next = 0;
  int64_t used_gpus = 0, used_cpus = 0;
  uint64_t used_gpu_mem = 0;
  run.first_submit = trace.empty() ? 0 : trace.front().submit;
  SimUsage usage(cfg);  // fair share (issue 16 §3): on with PriorityWeightFairshare > 0
  // Starts job `i` at `t` on `placement` (a scheduler decision or a preemptor's planned place).
  auto start_job = [&](size_t i, const std::vector<sched::NodePlacement>& placement, int64_t t) {
    SimJob& j = run.jobs[i];
    j.start = t;
    j.end = t + std::min(j.trace.runtime, j.snap.time_limit);
    j.cpus = j.gpus = 0;
    j.nodes.clear();
    sched::RunningSnap r{j.snap.id, j.snap.name, j.snap.user, j.snap.account, j.snap.qos, j.snap.partition, 0, t, t + j.snap.time_limit, {}};
    for (const auto& p : placement) {
      auto units = static_cast<uint32_t>(p.gpu_indices.size() + p.mig_uuids.size());
      r.nodes.push_back({p.node, p.cpus, p.mem_mib, units});
      j.cpus += p.cpus;
      j.gpus += static_cast<uint32_t>(p.gpu_indices.size());  // whole GPUs only
      j.nodes.push_back(static_cast<uint32_t>(live.index.at(p.node)));
    }
    used_gpus += j.gpus, used_cpus += j.cpus;
    used_gpu_mem += j.gpu_mem_mib;
    Apply(live, placement, true);
    placements[j.snap.id] = placement;
    running[j.snap.id] = std::move(r);
    ends.push({j.end, i});
  };
  // Preemption (issue 16 §4, sim/preempt.h): what it may do to the live nodes and running jobs
  // besides starts and ends (hold or give back resources, suspend, resume).
  SimPreempt pre(run);
  SimPreempt::LiveOps apply_live;
  apply_live.take = [&](const std::vector<sched::NodePlacement>& p, bool take) { Apply(live, p, take); };
  apply_live.fits = [&](const std::vector<sched::NodePlacement>& p) { return Fits(live, p); };
  apply_live.placement = [&](uint64_t id) { return placements[id]; };
  apply_live.leave = [&](size_t i) {  // the job stops holding its allocation (end, suspend)
    SimJob& j = run.jobs[i];
    Apply(live, placements[j.snap.id], false);
    running.erase(j.snap.id);
    used_gpus -= j.gpus, used_cpus -= j.cpus;
    used_gpu_mem -= j.gpu_mem_mib;
  };
  apply_live.resume = [&](size_t i, int64_t end) {  // a suspended job takes its allocation back
    SimJob& j = run.jobs[i];
    Apply(live, placements[j.snap.id], true);
    sched::RunningSnap r{j.snap.id, j.snap.name, j.snap.user, j.snap.account, j.snap.qos, j.snap.partition, 0, j.start, end, {}};
    for (const auto& p : placements[j.snap.id])
      r.nodes.push_back({p.node, p.cpus, p.mem_mib, static_cast<uint32_t>(p.gpu_indices.size() + p.mig_uuids.size())});
    running[j.snap.id] = std::move(r);
    used_gpus += j.gpus, used_cpus += j.cpus;
    used_gpu_mem += j.gpu_mem_mib;
    j.end = end;
    ends.push({end, i});
  };
  // Reservations (issue 17 §1, sim/reservations.h): while jobs wait, a block's start or end is
  // an instant too (a job may start then); not past 60 days after the last submission.
  int64_t last_t = run.first_submit - 1;
  int64_t resv_horizon = trace.empty() ? 0 : trace.back().submit + 60 * 86400;
  auto resv_wake = [&] {
    if (pending.empty() || cluster.reservations.empty()) return sched::kNever;
    int64_t w = NextReservationBoundary(cluster, last_t);
    return w > resv_horizon ? sched::kNever : w;
  };
  while (next < trace.size() || !ends.empty() || !reconf_done.empty() ||
         resv_wake() != sched::kNever) {
    int64_t t = resv_wake();
    if (next < trace.size()) t = std::min(t, trace[next].submit);
    if (!ends.empty()) t = std::min(t, ends.top().first);
    if (!reconf_done.empty()) t = std::min(t, reconf_done.top().first);
    last_t = t;
    usage.Advance(t, running);  // charges (last, t] before this instant's ends leave
    while (!reconf_done.empty() && reconf_done.top().first == t) {
      const sched::MigReconfig& r = reconfs[reconf_done.top().second];
      reconf_done.pop();
      MigLive::Finish(live.nodes[live.index.at(r.node)], r);
    }
    while (!ends.empty() && ends.top().first == t) {
      SimJob& j = run.jobs[ends.top().second];
      size_t ended = ends.top().second;
      ends.pop();
      if (t != j.end || !running.count(j.snap.id)) continue;  // moved by a preemption (sim/preempt.h)
      Apply(live, placements[j.snap.id], false);
      placements.erase(j.snap.id);
      running.erase(j.snap.id);
      used_gpus -= j.gpus, used_cpus -= j.cpus;
      used_gpu_mem -= j.gpu_mem_mib;
      run.last_end = std::max(run.last_end, t);
      if (pre.Ended(j, ended)) pending.push_back(ended);  // a REQUEUE victim pends again
    }
    // Preemptors whose victims are gone start on their planned place; suspended victims whose
    // preemptor is over resume (issue 16 §4, sim/preempt.h).
    pre.AfterEnds(t, start_job, apply_live, pending);
    for (; next < trace.size() && trace[next].submit == t; ++next) {
      const sched::JobSnap& js = run.jobs[next].snap;
      Status st = sched::CheckSatisfiable(js, empty);
      if (!st.ok() && js.groups.size() == 1)  // MigStrategy=dynamic: a GPU may be re-laid
        if (sched::CheckSatisfiable(js, DynamicMigCapacity(empty, js.groups[0].per_task.gpu_model)).ok())
          st = Status::Ok();
      if (st.ok()) pending.push_back(next);
      else run.jobs[next].rejected = st.message();
    }
    sched::ClusterSnapshot snap;
    snap.now = t;
    snap.nodes = live.nodes;
    snap.partitions = cluster.partitions;
    snap.topology = cluster.topology;
    snap.reservations = cluster.reservations;  // issue 17 §1
    for (size_t i : pending) snap.pending.push_back(run.jobs[i].snap);
    for (const auto& [id, r] : running) snap.running.push_back(r);
    pre.AdjustSnapshot(snap);
    usage.Fill(snap);
    auto t0 = std::chrono::steady_clock::now();
    sched::CycleResult res = sched::RunCycle(snap, cfg, reg);
    run.cycle_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (!res.status.ok()) {
      run.error = res.status.message();
      return run;
    }
    std::vector<size_t> still;
    for (size_t k = 0; k < res.decisions.size(); ++k) {
      const sched::Decision& d = res.decisions[k];
      size_t i = pending[k];
      if (d.kind != sched::Decision::Kind::kStart) {
        still.push_back(i);
        continue;
      }
      start_job(i, d.placement, t);
    }
    pending = std::move(still);
    pre.Apply(res.preemptions, t, [&](size_t i, int64_t at) { ends.push({at, i}); }, apply_live,
              start_job, pending);
    for (const auto& r : res.mig_reconfigs) {
      MigLive::Begin(live.nodes[live.index.at(r.node)], r);
      reconfs.push_back(r);
      reconf_done.push({t + std::max<int64_t>(1, cfg.mig_reconfig_seconds), reconfs.size() - 1});
      ++run.mig_reconfigs;
    }
    if (!res.queues.empty()) {  // issue 16 §2: the share table's queue columns
      SimRun::QueueSample qs;  // allocation after this cycle's starts (children in parents)
      qs.t = t;
      bool g = run.total_gpus > 0;
      std::map<std::string, int64_t> held;
      for (const auto& [id, r] : running)
        for (const auto& u : r.nodes) held[r.account] += g ? u.gpus : u.cpus;
      std::map<std::string, size_t> at;
      for (const auto& q : res.queues) {
        at[q.account] = qs.accounts.size();
        qs.accounts.push_back(q.account);
        qs.guarantee.push_back(g ? q.guarantee.gpu : q.guarantee.cpu);
        qs.deserved.push_back(g ? q.deserved.gpu : q.deserved.cpu);
        qs.allocated.push_back(held[q.account]);
      }
      for (size_t k = res.queues.size(); k-- > 0;)  // parents come first: add children upward
        if (!res.queues[k].parent.empty() && at.count(res.queues[k].parent))
          qs.allocated[at[res.queues[k].parent]] += qs.allocated[k];
      run.queue_samples.push_back(std::move(qs));
    }
    run.samples.push_back({t, run.total_gpus ? double(used_gpus) / double(run.total_gpus) : 0,
                           run.total_cpus ? double(used_cpus) / double(run.total_cpus) : 0, pending.size(),
                           run.total_gpu_mem_mib ? double(used_gpu_mem) / double(run.total_gpu_mem_mib) : 0});
  }
  return run;
}

}  // namespace tessera::sim
