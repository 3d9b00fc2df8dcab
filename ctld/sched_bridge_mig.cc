#include "ctld/sched_bridge_mig.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "common/mig_profiles.h"

namespace tessera::ctld {
namespace {

sched::MigGpuSnap MigGpuOf(const GpuState& g, const MigModel& m, bool dynamic, bool held_whole,
                           const std::set<std::string>& held) {
  sched::MigGpuSnap mg;
  mg.index = g.index;
  mg.mig_model = m.name;
  mg.mig_enabled = g.mig_enabled;
  mg.dynamic = dynamic;
  mg.busy = !g.healthy || held_whole;
  for (const auto& i : g.mig) {
    bool free = i.in_use_by_job == 0 && !held.count(i.uuid);
    mg.instances.push_back({i.profile, i.start, i.uuid, free});
  }
  return mg;
}

// The nodes whose MIG GPUs may be re-laid (ClusterConfig::MigDynamic), computed once: asking
// MigDynamic per node scans the node list and each partition's list, O(nodes^2) per snapshot,
// ~1 s of every scheduling cycle at 10,000 nodes (issue 20 §2).
std::unordered_set<std::string> DynamicMigNodes(const ClusterConfig& cfg) {
  std::unordered_set<std::string> out, set_on_node;
  for (const auto& n : cfg.nodes) {
    if (n.mig_strategy.empty()) continue;
    set_on_node.insert(n.name);
    if (n.mig_strategy == "dynamic") out.insert(n.name);
  }
  for (const auto& p : cfg.partitions) {
    if (p.mig_strategy != "dynamic") continue;
    for (const auto& n : p.nodes)
      if (!set_on_node.count(n)) out.insert(n);
  }
  return out;
}

}  // namespace

void FillMigGpus(sched::ClusterSnapshot& s, const ClusterConfig& cfg, NodeTable& nodes,
                 const std::vector<const JobRecord*>& active, const MigInFlight& in_flight) {
  std::map<std::string, std::set<std::string>> held;  // node -> MIG UUIDs held by jobs
  for (const JobRecord* j : active)
    for (const auto& a : j->alloc) held[a.node].insert(a.mig_uuids.begin(), a.mig_uuids.end());
  static const std::set<std::string> kNone;
  std::unordered_set<std::string> dynamic_nodes;
  bool any_gpus = false;
  for (const auto& ns : s.nodes) {
    const NodeRuntime* rt = nodes.Find(ns.name);
    if (rt && !rt->gpus.empty()) any_gpus = true;
  }
  if (any_gpus) dynamic_nodes = DynamicMigNodes(cfg);
  for (auto& ns : s.nodes) {
    NodeRuntime* rt = nodes.Find(ns.name);
    if (!rt || rt->gpus.empty()) continue;
    bool dynamic = dynamic_nodes.count(ns.name) > 0;
    auto h = held.find(ns.name);
    for (const auto& g : rt->gpus) {
      const MigModel* m = FindMigModelFor(g.model, g.memory_mib);
      if (!m) continue;
      bool whole = std::count(rt->alloc_gpus.begin(), rt->alloc_gpus.end(), g.index) > 0;
      sched::MigGpuSnap mg = MigGpuOf(g, *m, dynamic, whole, h == held.end() ? kNone : h->second);
      if (in_flight.CoolingDown(ns.name, g.index, s.now)) mg.busy = true;
      if (const auto* f = in_flight.Find(ns.name, g.index)) {
        mg.busy = true;
        mg.reconfig_until = f->until;
        mg.reconfig_for = f->for_jobs;
        for (auto& i : mg.instances) i.free = false;
        for (auto& u : ns.gpus)
          if (u.index == g.index) u.free = false;
      }
      ns.mig_gpus.push_back(std::move(mg));
    }
  }
}

uint64_t ConfiguredGpuMemory(const ClusterConfig& cfg, const std::string& node, uint32_t index) {
  auto it = cfg.gpus.find(node);
  if (it == cfg.gpus.end()) return 0;
  uint32_t first = 0;
  for (const auto& d : it->second) {
    if (index < first + d.count) return d.memory_mib;
    first += d.count;
  }
  return 0;
}

void FillGpuMemory(sched::NodeSnap& ns, const ClusterConfig& cfg) {
  for (auto& g : ns.gpus)
    if (g.mig_uuid.empty() && g.mem_mib == 0)
      g.mem_mib = ConfiguredGpuMemory(cfg, ns.name, g.index);
}

sched::ClusterSnapshot DynamicMigCluster(sched::ClusterSnapshot empty, const ClusterConfig& cfg,
                                         NodeTable& nodes, const std::string& profile) {
  std::unordered_set<std::string> dynamic_nodes = DynamicMigNodes(cfg);
  for (auto& ns : empty.nodes) {
    if (!dynamic_nodes.count(ns.name)) continue;
    std::vector<std::string> models;  // one entry per GPU
    NodeRuntime* rt = nodes.Find(ns.name);
    std::vector<uint64_t> memory;  // MiB per GPU (0 = unknown: the name decides)
    if (rt && !rt->gpus.empty()) {
      for (const auto& g : rt->gpus) models.push_back(g.model), memory.push_back(g.memory_mib);
    } else if (const NodeConfig* nc = cfg.FindNode(ns.name)) {
      for (const auto& [model, count] : nc->gres_gpus) models.insert(models.end(), count, model);
      for (uint32_t i = 0; i < models.size(); ++i) memory.push_back(ConfiguredGpuMemory(cfg, ns.name, i));
    }
    uint32_t idx = 0;
    for (const auto& model : models) {
      const MigModel* m = FindMigModelFor(model, idx < memory.size() ? memory[idx] : 0);
      const MigProfile* p = m ? FindMigProfile(*m, profile) : nullptr;
      uint32_t k = p ? MigEmptyCapacity(*m, *p) : 0;
      for (uint32_t i = 0; i < k; ++i)
        ns.gpus.push_back({idx, profile, true, true, "MIG-possible"});
      ++idx;
    }
  }
  return empty;
}

}  // namespace tessera::ctld
