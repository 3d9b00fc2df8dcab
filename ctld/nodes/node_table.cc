#include "ctld/nodes/node_table.h"

#include <algorithm>

#include "ctld/gpu_shares.h"
#include "ctld/nodes/gpu_use.h"

namespace tessera::ctld {

std::string NodeRuntime::StateName() const {
  if (base == NodeBase::kDown) return drain ? "DRAINED" : "DOWN";
  bool busy = alloc_cpus > 0 || !jobs.empty();
  if (drain) return busy ? "DRAINING" : "DRAINED";
  if (base == NodeBase::kUnknown) return "UNKNOWN";
  if (!busy) return "IDLE";
  return alloc_cpus >= config->cpus ? "ALLOCATED" : "MIXED";
}

NodeTable::NodeTable(const ClusterConfig& cfg) { Reconfigure(cfg); }

NodeRuntime* NodeTable::Find(const std::string& name) {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

void NodeTable::Reconfigure(const ClusterConfig& cfg) {
  std::map<std::string, NodeRuntime> next;
  order_.clear();
  for (const auto& nc : cfg.nodes) {
    NodeRuntime rt;
    auto it = nodes_.find(nc.name);
    if (it != nodes_.end()) {
      rt = it->second;
    } else {
      if (nc.initial_state == "DRAIN") rt.drain = true;
      if (nc.initial_state == "DOWN" || nc.initial_state == "FUTURE") rt.base = NodeBase::kDown;
      rt.reason = nc.reason;
    }
    rt.config = &nc;
    next[nc.name] = std::move(rt);
    order_.push_back(nc.name);
  }
  nodes_ = std::move(next);
}

void NodeTable::Allocate(const JobRecord& job) {
  for (const auto& a : job.alloc) {
    NodeRuntime* n = Find(a.node);
    if (!n) continue;
    n->alloc_cpus += a.cpus;
    n->alloc_mem += a.mem_mib;
    if (IsShareAlloc(a)) ApplyShareUse(a, *n, true);  // the shared GPU is not held whole
    else n->alloc_gpus.insert(n->alloc_gpus.end(), a.gpu_indices.begin(), a.gpu_indices.end());
    n->jobs.push_back(job.job_id);
    HoldGpus(*n, a, job.job_id);
  }
}

void NodeTable::Release(const JobRecord& job) {
  for (const auto& a : job.alloc) {
    NodeRuntime* n = Find(a.node);
    if (!n) continue;
    auto jit = std::find(n->jobs.begin(), n->jobs.end(), job.job_id);
    if (jit == n->jobs.end()) continue;  // already released
    n->jobs.erase(jit);
    n->alloc_cpus -= std::min(n->alloc_cpus, a.cpus);
    n->alloc_mem -= std::min(n->alloc_mem, a.mem_mib);
    if (IsShareAlloc(a)) {
      ApplyShareUse(a, *n, false);
      continue;
    }
    for (uint32_t g : a.gpu_indices) {
      auto it = std::find(n->alloc_gpus.begin(), n->alloc_gpus.end(), g);
      if (it != n->alloc_gpus.end()) n->alloc_gpus.erase(it);
    }
    ReleaseGpus(*n, a, job.job_id);
  }
}

}  // namespace tessera::ctld
