#include "ctld/mig_requests.h"

#include <set>

#include "common/mig_profiles.h"
#include "ctld/sched/gpu_mem.h"
#include "ctld/sched/scheduler.h"
#include "ctld/sched_bridge.h"
#include "ctld/sched_bridge_mig.h"

namespace tessera::ctld {
namespace {

std::set<std::string> AskedProfiles(const sched::JobSnap& job) {
  std::set<std::string> out;
  for (const auto& g : job.groups)
    for (const auto* model : {&g.per_task.gpu_model, &g.per_node.gpu_model})
      if (IsMigProfileName(*model)) out.insert(*model);
  return out;
}

// Units of `profile` a GPU of MIG model `m` may offer: its most instances.
void AddPossible(const MigModel* m, uint32_t gpu, const std::string& profile,
                 std::vector<sched::GpuSnap>* out) {
  const MigProfile* p = m ? FindMigProfile(*m, profile) : nullptr;
  if (!p) return;
  for (uint32_t i = 0; i < p->max_instances; ++i)
    out->push_back({gpu, profile, true, true, "MIG-possible"});
}

// Every profile (of any MIG model, media extensions left out) with at least `mem` MiB, smallest
// memory first.
std::vector<std::string> FittingProfiles(uint64_t mem) {
  std::set<std::pair<uint64_t, std::string>> fit;
  for (const auto& m : MigModels())
    for (const auto& p : m.profiles)
      if (!p.media_extensions && MigProfileMemoryMiB(p.name) >= mem)
        fit.insert({MigProfileMemoryMiB(p.name), p.name});
  std::vector<std::string> out;
  for (const auto& f : fit) out.push_back(f.second);
  return out;
}

}  // namespace

bool AsksMigProfile(const sched::JobSnap& job) { return !AskedProfiles(job).empty(); }

bool NeedsMigCheck(const sched::JobSnap& job) {
  return AsksMigProfile(job) || sched::AsksGpuMem(job);
}

sched::ClusterSnapshot MigCapacityCluster(const ClusterConfig& cfg, NodeTable& nodes,
                                          const sched::JobSnap& job) {
  sched::ClusterSnapshot s = SchedBridge::EmptyCluster(cfg);
  std::set<std::string> asked = AskedProfiles(job);
  for (auto& ns : s.nodes) {
    NodeRuntime* rt = nodes.Find(ns.name);
    if (!rt || rt->gpus.empty()) {  // layout unknown until the node reports: it may offer them
      std::vector<sched::GpuSnap> extra;
      for (const auto& g : ns.gpus)
        for (const auto& p : asked)
          AddPossible(FindMigModelFor(g.model, ConfiguredGpuMemory(cfg, ns.name, g.index)), g.index,
                      p, &extra);
      ns.gpus.insert(ns.gpus.end(), extra.begin(), extra.end());
      continue;
    }
    ns.gpus = SchedBridge::ReportedGpus(*rt, true);
  }
  return s;
}

Status CheckMigSatisfiable(const ClusterConfig& cfg, NodeTable& nodes, const sched::JobSnap& job) {
  Status st = sched::CheckSatisfiable(job, MigCapacityCluster(cfg, nodes, job));
  if (st.ok()) return st;
  if (job.groups.size() == 1) {  // MigStrategy=dynamic: a GPU may be re-laid for it
    const auto& g = job.groups[0];
    const std::string& p = g.per_task.gpu_model.empty() ? g.per_node.gpu_model : g.per_task.gpu_model;
    bool by_need = p.empty() && sched::AsksGpuMem(job);
    auto profiles = by_need ? FittingProfiles(sched::JobGpuMem(job)) : std::vector<std::string>{p};
    for (const auto& profile : profiles) {
      auto dyn = DynamicMigCluster(SchedBridge::EmptyCluster(cfg), cfg, nodes, profile);
      if (sched::CheckSatisfiable(job, dyn).ok()) return Status::Ok();
    }
  }
  for (const auto& p : AskedProfiles(job))
    if (st.message().find("gres/gpu:" + p + ")") != std::string::npos)
      return InvalidArgument(st.message() + ": no node of partition " + job.partition +
                             " has enough MIG instances of profile " + p +
                             " (tcontrol show node lists each GPU's MIG layout)");
  return st;
}

}  // namespace tessera::ctld
