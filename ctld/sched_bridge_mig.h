#pragma once
// Dynamic MIG (MigStrategy=dynamic) at the seam between live controller state and the scheduler:
//  - MigInFlight: the reconfigurations ctld has sent to nodes and not seen answered, per
//    (node, GPU): until when the scheduler holds the GPU and which jobs it serves.
//  - FillMigGpus: fills NodeSnap::mig_gpus (the dynamic planner's view) from the reported GPUs:
//    every GPU whose model has MIG tables (common/mig_profiles.h, looked up by the reported
//    model as noded does), dynamic per ClusterConfig::MigDynamic, busy when held whole,
//    unhealthy or being reconfigured (its units are then listed not free), instances free unless
//    a job holds them.
//  - DynamicMigCluster: the empty-cluster view used at submit for "busy vs never": each MIG GPU
//    of a dynamic node offers `profile` as many times as an empty GPU of its model holds, so a
//    MIG profile no current layout offers is still satisfiable when a dynamic GPU can be re-laid.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/cluster_config.h"
#include "ctld/jobs/job.h"
#include "ctld/nodes/node_table.h"
#include "ctld/sched/snapshot.h"

namespace tessera::ctld {

class MigInFlight {
 public:
  struct Entry {
    int64_t until = 0;
    std::vector<uint64_t> for_jobs;
  };
  const Entry* Find(const std::string& node, uint32_t gpu) const {
    auto it = m_.find({node, gpu});
    return it == m_.end() ? nullptr : &it->second;
  }
  void Start(const std::string& node, uint32_t gpu, Entry e) { m_[{node, gpu}] = std::move(e); }
  void Finish(const std::string& node, uint32_t gpu) { m_.erase({node, gpu}); }
  bool empty() const { return m_.empty(); }
  // A refused reconfiguration: the GPU is not planned again until `until` (no retry storm).
  void Refused(const std::string& node, uint32_t gpu, int64_t until) { cool_[{node, gpu}] = until; }
  bool CoolingDown(const std::string& node, uint32_t gpu, int64_t now) const {
    auto it = cool_.find({node, gpu});
    return it != cool_.end() && it->second > now;
  }

 private:
  std::map<std::pair<std::string, uint32_t>, Entry> m_;
  std::map<std::pair<std::string, uint32_t>, int64_t> cool_;
};

void FillMigGpus(sched::ClusterSnapshot& s, const ClusterConfig& cfg, NodeTable& nodes,
                 const std::vector<const JobRecord*>& active, const MigInFlight& in_flight);

// The MemoryMiB= of GPU `index` of `node` in gres.conf (0 when not declared): with the type it
// picks the MIG tables (FindMigModelFor) of a GPU that has not reported yet.
uint64_t ConfiguredGpuMemory(const ClusterConfig& cfg, const std::string& node, uint32_t index);

// (gpusched, --gpu-mem) Sets GpuSnap::mem_mib of the whole GPUs of `ns` that have none (not
// reported) from gres.conf MemoryMiB= (ConfiguredGpuMemory); 0 stays when neither says.
void FillGpuMemory(sched::NodeSnap& ns, const ClusterConfig& cfg);

// `empty` (SchedBridge::EmptyCluster) with, on dynamic nodes, `profile` units added for every
// GPU (reported, else configured) whose MIG model has that profile (as MIG instances, UUID
// "MIG-possible"). Unchanged when `profile` is not a MIG profile or no node is dynamic.
sched::ClusterSnapshot DynamicMigCluster(sched::ClusterSnapshot empty, const ClusterConfig& cfg,
                                         NodeTable& nodes, const std::string& profile);

}  // namespace tessera::ctld
