#pragma once
// The controller's live view of every configured node: registration, liveness, admin state
// (drain/down) and what is allocated on it. Core thread only.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "ctld/jobs/job.h"

namespace tessera::ctld {

struct MigState {
  std::string profile;        // "3g.40gb"
  uint32_t start = 0, size = 0;
  std::string uuid;
  uint64_t in_use_by_job = 0;
  uint32_t gpu_instance_id = 0;
};

struct GpuState {
  uint32_t index = 0;
  std::string uuid;
  std::string model;
  uint64_t memory_mib = 0;
  bool healthy = true;
  bool simulated = false;
  std::string health_reason;
  bool mig_enabled = false;
  std::vector<MigState> mig;
  int32_t numa_node = -1;
  std::string pci_bus_id;
  bool mps = false;
  uint32_t replicas = 0;
  uint32_t minor = 0;
  // gres/mps count of this GPU when mps (gres.conf Name=mps Count=, common/gres_shares.h);
  // 0 = Slurm's default of 100 (ctld/gpu_shares.h MpsTotal).
  uint32_t mps_count = 0;
  // Set by ctld while the GPU is drained (its gpu_drain row): when and by whom; -1 = unknown.
  int64_t reason_time = 0;
  int64_t reason_uid = -1;
};

struct HcaState {
  std::string name;
  uint32_t port = 0;
  std::string state, rate, link_layer, pci_bus_id;
  int32_t numa_node = -1;
  std::string netdev;  // RoCE port: its network interface
};

// The controller's handle on a connected noded. Implemented by the NodeAgent RPC service.
class NodeLink {
 public:
  virtual ~NodeLink() = default;
  virtual void Launch(const JobRecord& job, const JobPayload& payload, int64_t kill_wait_s) = 0;
  // 0 = cancel. `run`: only that run of the job (JobRecord::run); 0 = whichever runs there.
  virtual void Signal(uint64_t job_id, int signal, uint64_t run) = 0;
  // Acknowledges the node's report of `run` of the job (0 = whichever it reported).
  virtual void AckFinished(uint64_t job_id, uint64_t run) = 0;
  // Ends the stream (the node sees it closed). Used when another registration replaces a node
  // that stopped responding.
  virtual void Disconnect() {}
  // Writes an empty message on the stream (noded ignores it). Sent when a second registration
  // for this node is refused: if the old connection is in fact dead (its noded restarted, or
  // the host rebooted, without ctld noticing), the write fails, the stream ends, and the
  // node's next registration is accepted.
  virtual void Probe() {}
  struct Grant {
    uint64_t job_id;
    uint32_t step_id;
    uint32_t uid, gid;
    std::string user;
    std::vector<uint32_t> ranks;
    uint32_t node_index, ntasks, cpus_per_task;
    std::string nodelist, master_addr;
    uint32_t master_port;
    NodeAlloc alloc;  // this node's own part of the job's allocation (its GPUs, CPUs, memory)
    // gpunode: the step asked GPUs (trun --gpus...): its own, a part of alloc's.
    bool step_gpus_set = false;
    std::vector<uint32_t> step_gpus;
    std::vector<std::string> step_migs;
  };
  // Lets this node run `grant.ranks` of a step for its user (trun's RunTasks), with this node's
  // own allocation `grant.alloc` (noded gives the tasks these GPUs and a job cgroup).
  virtual void GrantStep(const Grant& grant) = 0;
  struct MigPlacementReq {
    std::string profile;
    int64_t start = -1;  // -1 = the node picks
  };
  // Asks the node to change GPU `gpu`'s MIG layout; it answers with MigConfigured(request_id).
  virtual void ConfigureMig(uint64_t request_id, uint32_t gpu, const std::vector<MigPlacementReq>& create,
                            const std::vector<std::string>& destroy) = 0;
  // Tells the node that ctld drained (drain=true, reason) or resumed GPU `gpu` (issue 14).
  virtual void SetGpuDrain(uint32_t gpu, bool drain, const std::string& reason) {}
  // Issue 20 §3 (sdiag): messages queued for the node and not yet written, and whether a
  // write is in flight. Thread-safe.
  struct Backlog {
    uint32_t queued = 0;
    bool writing = false;
  };
  virtual Backlog backlog() { return {}; }
};

enum class NodeBase { kUnknown, kUp, kDown };

struct NodeRuntime {
  const NodeConfig* config = nullptr;
  NodeBase base = NodeBase::kUnknown;
  bool drain = false;
  std::string reason;
  int64_t reason_time = 0;
  int64_t reason_uid = -1;         // who set the reason (issue 19, sinfo -R USER); -1 unknown
  int64_t last_heartbeat = 0;
  int64_t boot_time = 0;
  std::string boot_id;             // the host's boot id at the last registration ("" = unknown)
  uint32_t reported_cpus = 0;
  uint64_t reported_mem = 0;
  std::string version;
  // Issue 19 (scontrol show node): the host's uname (Register) and load and free memory (each
  // Heartbeat); "" / -1 / 0 = not reported.
  std::string os, arch;
  int32_t cpu_load_x100 = -1;
  uint64_t free_mem_mib = 0;
  std::vector<GpuState> gpus;
  std::vector<HcaState> hcas;
  std::shared_ptr<NodeLink> link;  // null when not connected
  // Allocation (sum over running jobs).
  uint32_t alloc_cpus = 0;
  uint64_t alloc_mem = 0;
  std::vector<uint32_t> alloc_gpus;     // GPUs held whole
  // GPU sharing (ctld/gpu_shares.h): GPU index -> MPS percent / shards held by running jobs.
  // A shared GPU is not in alloc_gpus.
  std::map<uint32_t, uint32_t> alloc_mps, alloc_shards;
  std::vector<uint64_t> jobs;
  // Who holds what (NodeTable::Allocate/Release; see nodes/gpu_use.h): every GPU index in a
  // job's gpu_indices, and every MIG instance (UUID) a job holds. ctld's view wins over the
  // node's report: gpus[].mig[].in_use_by_job is rewritten from mig_jobs (ApplyMigUse).
  std::vector<std::pair<uint32_t, uint64_t>> gpu_jobs;
  std::map<std::string, uint64_t> mig_jobs;

  bool Schedulable() const { return base == NodeBase::kUp && !drain && link != nullptr; }
  // Slurm-style state name: IDLE, MIXED, ALLOCATED, DOWN, DRAINED, DRAINING, UNKNOWN.
  std::string StateName() const;
};

// Not connected but not declared DOWN (ctld restarted and the node has not registered again, or
// its stream broke): the node may still run its jobs, so a job stopped there (cancel, requeue,
// preemption) keeps its resources until the node registers (and is told to kill the run) or
// SlurmdTimeout declares it DOWN. Never started elsewhere meanwhile.
inline bool MayStillRun(const NodeRuntime* n) {
  return n && !n->link && n->base != NodeBase::kDown;
}

class NodeTable {
 public:
  explicit NodeTable(const ClusterConfig& cfg);

  NodeRuntime* Find(const std::string& name);
  std::map<std::string, NodeRuntime>& nodes() { return nodes_; }
  const std::vector<std::string>& order() const { return order_; }

  void Allocate(const JobRecord& job);
  void Release(const JobRecord& job);
  // Applies a new configuration, keeping runtime state of nodes that still exist.
  void Reconfigure(const ClusterConfig& cfg);

 private:
  std::map<std::string, NodeRuntime> nodes_;
  std::vector<std::string> order_;  // config order
};

}  // namespace tessera::ctld
