#include "ctld/nodes/gpu_use.h"

#include <algorithm>

namespace tessera::ctld {

void HoldGpus(NodeRuntime& n, const NodeAlloc& a, uint64_t job) {
  for (uint32_t g : a.gpu_indices) n.gpu_jobs.emplace_back(g, job);
  for (const auto& u : a.mig_uuids) n.mig_jobs[u] = job;
  if (!a.mig_uuids.empty()) ApplyMigUse(n);
}

void ReleaseGpus(NodeRuntime& n, const NodeAlloc& a, uint64_t job) {
  for (uint32_t g : a.gpu_indices) {
    auto it = std::find(n.gpu_jobs.begin(), n.gpu_jobs.end(), std::make_pair(g, job));
    if (it != n.gpu_jobs.end()) n.gpu_jobs.erase(it);
  }
  for (const auto& u : a.mig_uuids) {
    auto it = n.mig_jobs.find(u);
    if (it != n.mig_jobs.end() && it->second == job) n.mig_jobs.erase(it);
  }
  if (!a.mig_uuids.empty()) ApplyMigUse(n);
}

void ApplyMigUse(NodeRuntime& n) {
  for (auto& g : n.gpus)
    for (auto& m : g.mig) m.in_use_by_job = MigHolder(n, m.uuid);
}

uint64_t GpuHolder(const NodeRuntime& n, uint32_t gpu) {
  for (const auto& [g, job] : n.gpu_jobs)
    if (g == gpu) return job;
  for (const auto& g : n.gpus) {
    if (g.index != gpu) continue;
    for (const auto& m : g.mig)
      if (uint64_t job = MigHolder(n, m.uuid)) return job;
  }
  return 0;
}

uint64_t MigHolder(const NodeRuntime& n, const std::string& uuid) {
  auto it = n.mig_jobs.find(uuid);
  return it == n.mig_jobs.end() ? 0 : it->second;
}

const GpuState* GpuOfMig(const NodeRuntime& n, const std::string& uuid) {
  for (const auto& g : n.gpus) {
    if (!g.mig_enabled) continue;
    for (const auto& m : g.mig)
      if (m.uuid == uuid) return &g;
  }
  return nullptr;
}

Status MigChangeAllowed(const NodeRuntime& n, uint32_t gpu) {
  uint64_t job = GpuHolder(n, gpu);
  if (!job) return Status::Ok();
  return FailedPrecondition("GPU " + std::to_string(gpu) + " of node " + n.config->name +
                            " is in use by job " + std::to_string(job) +
                            ": its MIG layout cannot change while a job holds it or one of its "
                            "instances (nothing was changed)");
}

}  // namespace tessera::ctld
