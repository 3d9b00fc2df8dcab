#include "sim/mig_sim.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <queue>
#include <random>
#include <set>

#include "ctld/sched/registry.h"
#include "ctld/sched/scheduler.h"

namespace tessera::sim {
namespace {

const char* const kProfile[4] = {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"};
const uint32_t kSlices[4] = {1, 2, 4, 8};
const double kMix[3][4] = {{.60, .25, .10, .05}, {.10, .20, .40, .30}, {.25, .25, .25, .25}};

struct Inst {
  std::string profile;
  uint32_t start = 0;
  std::string uuid;
  uint64_t job = 0;  // 0 = free
};

struct Gpu {
  uint32_t index = 0;
  std::vector<Inst> inst;
  uint64_t whole_job = 0;
  int64_t reconfig_until = 0;
  sched::MigReconfig pending;
};

struct Node {
  std::string name;
  std::vector<Gpu> gpus;
  uint32_t used_cpus = 0;
};

std::vector<Inst> StaticLayout(uint32_t gpu, const std::string& tag, uint64_t& uuid) {
  std::vector<std::pair<std::string, uint32_t>> l;
  switch (gpu % 4) {
    case 0: for (uint32_t s = 0; s < 7; ++s) l.push_back({"1g.10gb", s}); break;
    case 1: l = {{"2g.20gb", 0}, {"2g.20gb", 2}, {"2g.20gb", 4}}; break;
    case 2: l = {{"3g.40gb", 0}, {"3g.40gb", 4}}; break;
    default: l = {{"7g.80gb", 0}};
  }
  std::vector<Inst> out;
  for (auto& [p, s] : l) out.push_back({p, s, "MIG-" + tag + "-" + std::to_string(uuid++), 0});
  return out;
}

sched::NodeSnap SnapOf(const Node& n, MigMode mode) {
  sched::NodeSnap s;
  s.name = n.name;
  s.cpus_total = 1000;
  s.cpus_free = 1000 - n.used_cpus;
  s.mem_total = s.mem_free = 1000000;
  s.partitions = {"p"};
  s.idle = n.used_cpus == 0;
  for (const auto& g : n.gpus) {
    if (mode == MigMode::kWholeGpu) {
      s.gpus.push_back({g.index, "h100", g.whole_job == 0, true, ""});
      continue;
    }
    sched::MigGpuSnap mg;
    mg.index = g.index;
    mg.mig_model = "H100-80GB";
    mg.mig_enabled = true;
    mg.dynamic = mode == MigMode::kDynamic;
    mg.busy = g.reconfig_until > 0;
    mg.reconfig_until = g.reconfig_until;
    if (g.reconfig_until > 0) mg.reconfig_for = g.pending.for_jobs;
    for (const auto& i : g.inst) {
      bool free = i.job == 0 && g.reconfig_until == 0;
      s.gpus.push_back({g.index, i.profile, free, true, i.uuid});
      mg.instances.push_back({i.profile, i.start, i.uuid, free});
    }
    s.mig_gpus.push_back(std::move(mg));
  }
  return s;
}

struct Sim {
  const MigWorkloadOptions& o;
  const std::vector<MigJobSpec>& jobs;
  MigMode mode;
  std::vector<Node> nodes;
  std::vector<int64_t> start;
  int64_t area = 0, last_t = 0, cur_slices = 0;
  uint64_t next_uuid = 1;
  size_t reconfigs = 0;

  void Advance(int64_t t) {
    area += cur_slices * (t - last_t);
    last_t = t;
  }
  Node& NodeNamed(const std::string& name) {
    for (auto& n : nodes)
      if (n.name == name) return n;
    return nodes.front();
  }
  // Mirrors Statement::Allocate: the first free unit of the job's model on that GPU.
  void Take(Node& n, uint32_t gpu, uint64_t job, const std::string& profile) {
    Gpu& g = n.gpus[gpu];
    ++n.used_cpus;
    if (mode == MigMode::kWholeGpu) {
      g.whole_job = job;
      return;
    }
    for (auto& i : g.inst)
      if (i.job == 0 && i.profile == profile) {
        i.job = job;
        return;
      }
  }
  void Release(Node& n, uint64_t job) {
    --n.used_cpus;
    for (auto& g : n.gpus) {
      if (g.whole_job == job) g.whole_job = 0;
      for (auto& i : g.inst)
        if (i.job == job) i.job = 0;
    }
  }
  void Complete(Node& n, uint32_t gpu) {
    Gpu& g = n.gpus[gpu];
    std::vector<Inst> next;
    for (auto& i : g.inst)
      if (!std::count(g.pending.destroy.begin(), g.pending.destroy.end(), i.uuid))
        next.push_back(i);
    for (auto& [p, s] : g.pending.create)
      next.push_back({p, s, "MIG-r" + std::to_string(next_uuid++), 0});
    g.inst = std::move(next);
    g.reconfig_until = 0;
    g.pending = {};
  }
};

}  // namespace

std::vector<MigJobSpec> GenerateMigWorkload(const MigWorkloadOptions& o) {
  std::mt19937_64 rng(o.seed);
  double mean_slices = 0;
  for (const auto& phase : kMix)
    for (int p = 0; p < 4; ++p) mean_slices += phase[p] * kSlices[p] / 3.0;
  double capacity = 8.0 * o.nodes * o.gpus_per_node;
  double rate = o.load * capacity / (mean_slices * double(o.mean_runtime));  // jobs per second
  std::exponential_distribution<double> gap(rate), run(1.0 / double(o.mean_runtime));
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<MigJobSpec> out;
  double t = 0;
  for (uint32_t k = 0; k < o.jobs; ++k) {
    t += gap(rng);
    const double* mix = kMix[std::min<uint32_t>(2, k * 3 / std::max<uint32_t>(1, o.jobs))];
    double x = u(rng), acc = 0;
    int p = 3;
    for (int i = 0; i < 4; ++i)
      if (x < (acc += mix[i])) {
        p = i;
        break;
      }
    int64_t r = std::clamp<int64_t>(std::llround(run(rng)), 60, 8 * o.mean_runtime);
    out.push_back({static_cast<int64_t>(t), r, kProfile[p], kSlices[p]});
  }
  return out;
}

MigSimResult SimulateMig(const MigWorkloadOptions& o, const std::vector<MigJobSpec>& jobs,
                         MigMode mode) {
  Sim sim{o, jobs, mode, {}, std::vector<int64_t>(jobs.size(), -1)};
  for (uint32_t n = 0; n < o.nodes; ++n) {
    Node node{"n" + std::to_string(n + 1), {}, 0};
    for (uint32_t g = 0; g < o.gpus_per_node; ++g) {
      Gpu gpu;
      gpu.index = g;
      if (mode != MigMode::kWholeGpu) gpu.inst = StaticLayout(g, node.name, sim.next_uuid);
      node.gpus.push_back(std::move(gpu));
    }
    sim.nodes.push_back(std::move(node));
  }
  sched::SchedConfig cfg;
  cfg.mig_reconfig_seconds = o.reconfig_seconds;
  sched::Registry reg = sched::Registry::Builtin();
  using Ev = std::pair<int64_t, size_t>;
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> ends;
  std::priority_queue<std::pair<int64_t, std::pair<size_t, uint32_t>>,
                      std::vector<std::pair<int64_t, std::pair<size_t, uint32_t>>>, std::greater<>>
      reconf;
  std::vector<size_t> pending;
  std::map<size_t, std::string> where;
  size_t next = 0;
  int64_t last_end = 0;
  size_t limit = 50 * jobs.size() + 1000;  // safety: a plan that never converges
  for (size_t guard = 0; (next < jobs.size() || !ends.empty() || !reconf.empty()) && guard < limit;
       ++guard) {
    int64_t t = next < jobs.size() ? jobs[next].submit : sched::kNever;
    if (!ends.empty()) t = std::min(t, ends.top().first);
    if (!reconf.empty()) t = std::min(t, reconf.top().first);
    sim.Advance(t);
    for (; !ends.empty() && ends.top().first == t; ends.pop()) {
      size_t j = ends.top().second;
      sim.Release(sim.NodeNamed(where[j]), j + 1);
      sim.cur_slices -= jobs[j].slices;
      last_end = std::max(last_end, t);
    }
    for (; !reconf.empty() && reconf.top().first == t; reconf.pop())
      sim.Complete(sim.nodes[reconf.top().second.first], reconf.top().second.second);
    for (; next < jobs.size() && jobs[next].submit == t; ++next) pending.push_back(next);
    if (pending.empty()) continue;
    sched::ClusterSnapshot snap;
    snap.now = t;
    snap.partitions = {{"p", true, 0, -1, -1, 1}};
    for (const auto& n : sim.nodes) snap.nodes.push_back(SnapOf(n, mode));
    for (size_t i : pending) {
      sched::JobSnap js;
      js.id = i + 1;
      js.partition = "p";
      js.submit_time = jobs[i].submit;
      js.time_limit = jobs[i].runtime;
      std::string model = mode == MigMode::kWholeGpu ? "h100" : jobs[i].profile;
      js.groups.push_back({"main", 1, {1, 0, 1, model}, 0, {}});
      snap.pending.push_back(std::move(js));
    }
    for (const auto& [i, node] : where)
      if (sim.start[i] >= 0 && sim.start[i] + jobs[i].runtime > t)
        snap.running.push_back({i + 1, "", "", "", "", "p", 0, sim.start[i],
                                sim.start[i] + jobs[i].runtime, {{node, 1, 0, 1}}});
    sched::CycleResult res = sched::RunCycle(snap, cfg, reg);
    std::vector<size_t> still;
    for (size_t k = 0; k < res.decisions.size(); ++k) {
      const auto& d = res.decisions[k];
      size_t i = pending[k];
      if (d.kind != sched::Decision::Kind::kStart) {
        still.push_back(i);
        continue;
      }
      const auto& p = d.placement.front();
      sim.Take(sim.NodeNamed(p.node), p.gpu_indices.front(), i + 1, jobs[i].profile);
      sim.start[i] = t;
      sim.cur_slices += jobs[i].slices;
      where[i] = p.node;
      ends.push({t + jobs[i].runtime, i});
    }
    pending = std::move(still);
    for (auto& r : res.mig_reconfigs) {
      size_t ni = 0;
      while (ni < sim.nodes.size() && sim.nodes[ni].name != r.node) ++ni;
      if (ni == sim.nodes.size()) continue;
      Gpu& g = sim.nodes[ni].gpus[r.gpu_index];
      bool ok = g.reconfig_until == 0;
      for (const auto& i : g.inst) ok = ok && i.job == 0;
      if (!ok) continue;
      g.reconfig_until = t + o.reconfig_seconds;
      g.pending = r;
      ++sim.reconfigs;
      reconf.push({g.reconfig_until, {ni, r.gpu_index}});
    }
  }
  MigSimResult out;
  out.jobs = jobs.size();
  std::vector<double> waits;
  for (size_t i = 0; i < jobs.size(); ++i)
    if (sim.start[i] >= 0) waits.push_back(double(sim.start[i] - jobs[i].submit));
  out.finished = waits.size();
  std::sort(waits.begin(), waits.end());
  for (double w : waits) out.mean_wait += w / double(std::max<size_t>(1, waits.size()));
  out.p95_wait = waits.empty() ? 0 : waits[std::min(waits.size() - 1, waits.size() * 95 / 100)];
  int64_t first = jobs.empty() ? 0 : jobs.front().submit;
  out.makespan = last_end - first;
  double cap = 8.0 * o.nodes * o.gpus_per_node * double(std::max<int64_t>(1, out.makespan));
  out.gpu_mem_util = double(sim.area) / cap;
  out.reconfigs = sim.reconfigs;
  return out;
}

std::string MigTable(const MigWorkloadOptions& o, const std::vector<MigSimResult>& rs) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%u nodes x %u H100-80GB, %u jobs, seed %llu, load %.2f, mean runtime %llds, "
                "reconfiguration %llds\n\n",
                o.nodes, o.gpus_per_node, o.jobs, static_cast<unsigned long long>(o.seed), o.load,
                static_cast<long long>(o.mean_runtime), static_cast<long long>(o.reconfig_seconds));
  std::string s = buf;
  s += "| policy | jobs run | mean wait (s) | p95 wait (s) | GPU-memory utilization | "
       "reconfigurations | makespan (s) |\n";
  s += "|---|---|---|---|---|---|---|\n";
  for (const auto& r : rs) {
    std::snprintf(buf, sizeof buf, "| %s | %zu/%zu | %.0f | %.0f | %.1f%% | %zu | %lld |\n",
                  r.label.c_str(), r.finished, r.jobs, r.mean_wait, r.p95_wait,
                  100.0 * r.gpu_mem_util, r.reconfigs, static_cast<long long>(r.makespan));
    s += buf;
  }
  return s;
}

}  // namespace tessera::sim
