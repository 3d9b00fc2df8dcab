#pragma once
// The seam between live controller state and the pure scheduler library: builds a
// sched::ClusterSnapshot from the job and node tables (contract in ctld/sched/snapshot.h), and
// offers the checks ctld applies to decisions before acting on them.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "common/cluster_config.h"
#include "ctld/jobs/job.h"
#include "ctld/nodes/node_table.h"
#include "ctld/sched/scheduler.h"

namespace tessera::ctld {

class SchedBridge {
 public:
  // The scheduler's topology (issue 15), built once per config by ctld/topology_live.h; null =
  // flat. Snapshot and EmptyCluster put it in ClusterSnapshot::topology.
  using TopologyPtr = std::shared_ptr<const sched::TopologySnap>;
  // `durable(id)`: whether the job's submission has committed (others are invisible).
  // `active`: the unfinished jobs in id order (JobManager::active()), what is walked unless a
  // pending job has a dependency: then every record of `jobs` is (held and finished jobs too).
  static sched::ClusterSnapshot Snapshot(const ClusterConfig& cfg,
                                         const std::map<uint64_t, JobRecord>& jobs,
                                         const std::vector<const JobRecord*>& active,
                                         NodeTable& nodes, int64_t now,
                                         const std::function<bool(uint64_t)>& durable,
                                         TopologyPtr topology = nullptr);
  // The job as the scheduler sees it (also used for the submit-time checks).
  static sched::JobSnap ToSnap(const JobRecord& j);
  // A snapshot of the configured cluster with every node idle and up.
  static sched::ClusterSnapshot EmptyCluster(const ClusterConfig& cfg,
                                             TopologyPtr topology = nullptr);
  // True when `placement` still fits the live node table (nodes up, resources free).
  static bool StillFits(const std::vector<sched::NodePlacement>& placement, NodeTable& nodes);
  // `nodes` (may be null): the live table, for an mps allocation's percent (SetMpsPercent).
  static std::vector<NodeAlloc> ToAlloc(const std::vector<sched::NodePlacement>& placement,
                                        NodeTable* nodes = nullptr);
  // The node's reported GPUs as schedulable units (snapshot.h GpuSnap): whole GPUs not in MIG
  // mode, one unit per MIG instance of a GPU in MIG mode; free unless a job holds the unit
  // (every unit free when `all_free`).
  static std::vector<sched::GpuSnap> ReportedGpus(const NodeRuntime& rt, bool all_free);
};

}  // namespace tessera::ctld
