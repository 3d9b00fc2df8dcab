#include "ctld/sched/gpu_mem.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "common/mig_profiles.h"
#include "ctld/sched/cluster_state.h"
#include "ctld/sched/session.h"

namespace tessera::sched {
namespace {

bool ReqAsksMem(const Req& r) { return r.gpus > 0 && r.gpu_mem_mib > 0; }

}  // namespace

bool AsksGpuMem(const JobSnap& job) {
  for (const auto& g : job.groups)
    if (ReqAsksMem(g.per_task) || ReqAsksMem(g.per_node)) return true;
  return false;
}

uint64_t JobGpuMem(const JobSnap& job) {
  uint64_t m = 0;
  for (const auto& g : job.groups)
    for (const Req* r : {&g.per_task, &g.per_node})
      if (ReqAsksMem(*r)) m = std::max(m, r->gpu_mem_mib);
  return m;
}

const std::string& JobGpuMemFilter(const JobSnap& job) {
  static const std::string kAny;
  for (const auto& g : job.groups)
    for (const Req* r : {&g.per_task, &g.per_node})
      if (ReqAsksMem(*r) && !r->gpu_model.empty()) return r->gpu_model;
  return kAny;
}

uint64_t GpuUnitMemMib(const GpuSnap& g) {
  return g.mig_uuid.empty() ? g.mem_mib : MigProfileMemoryMiB(g.model);
}

std::vector<std::string> GpuMemCandidates(const ClusterState& st, int part, uint64_t mem,
                                          const std::string& filter) {
  auto& memo = st.GpuMemMemo();
  auto key = std::make_tuple(part, mem, filter);
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  // model -> (least memory of its units, is a MIG profile)
  std::map<std::string, std::pair<uint64_t, bool>> models;
  for (uint32_t i : st.PartitionNodes(part)) {
    const NodeRt& n = st.nodes()[i];
    if (!n.usable) continue;
    for (const auto& g : n.snap->gpus) {
      if (!g.healthy || (!filter.empty() && g.model != filter)) continue;
      uint64_t m = GpuUnitMemMib(g);
      auto [it, fresh] = models.try_emplace(g.model, m, !g.mig_uuid.empty());
      if (!fresh) it->second.first = std::min(it->second.first, m);
    }
  }
  std::vector<std::tuple<uint64_t, bool, std::string>> order;
  for (const auto& [model, v] : models)
    if (v.first >= mem) order.emplace_back(v.first, !v.second, model);
  std::sort(order.begin(), order.end());
  std::vector<std::string> out;
  for (auto& o : order) out.push_back(std::get<2>(o));
  memo[key] = out;
  return out;
}

JobSnap GpuMemVariant(const JobSnap& job, const std::string& model) {
  JobSnap v = job;
  for (auto& g : v.groups)
    for (Req* r : {&g.per_task, &g.per_node})
      if (ReqAsksMem(*r)) {
        r->gpu_model = model;
        r->gpu_mem_mib = 0;
      }
  return v;
}

bool ForEachGpuMemVariant(Session& s, JobInfo& j, const std::function<bool(JobInfo&)>& fn) {
  const JobSnap* orig = j.snap;
  auto cands = GpuMemCandidates(s.state(), j.partition, JobGpuMem(*orig), JobGpuMemFilter(*orig));
  if (cands.empty()) {
    j.reason = "Resources";
    return false;
  }
  std::string shape = std::move(j.shape);
  bool done = false;
  for (const auto& model : cands) {
    JobSnap v = GpuMemVariant(*orig, model);
    j.snap = &v;
    j.shape.clear();
    done = fn(j);
    j.snap = orig;
    if (done) break;
  }
  j.shape = std::move(shape);
  return done;
}

std::string SmallestMigProfileFor(const std::string& mig_model, uint64_t mem) {
  const MigModel* m = FindMigModel(mig_model);
  if (!m) return "";
  const MigProfile* best = nullptr;
  for (const auto& p : m->profiles) {
    uint64_t pm = MigProfileMemoryMiB(p.name);
    if (p.media_extensions || pm < mem) continue;
    if (!best || pm < MigProfileMemoryMiB(best->name) ||
        (pm == MigProfileMemoryMiB(best->name) && p.compute < best->compute))
      best = &p;
  }
  return best ? best->name : "";
}

}  // namespace tessera::sched
