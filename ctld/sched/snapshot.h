#pragma once
// The scheduler's input: an immutable picture of the cluster at `now`.
// Built by ctld's sched_bridge from live state (and by tessera-sim from a trace).
//
// Contract for builders:
//  - nodes[].cpus_free/mem_free/gpus[].free already exclude every running job's allocation.
//  - running[] lists every job holding resources, with the time it is expected to end
//    (start + time limit; kNever when unlimited). Backfill's timeline and the per-user/QoS/
//    account limits are computed from it.
//  - pending[] holds every pending job (held ones too: they get a JobHeld* reason);
//    finished[] holds jobs that ended and are still known, for dependency evaluation.
//  - Times are epoch seconds; durations are seconds.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/topology_config.h"

namespace tessera::sched {

inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max() / 4;

// One schedulable GPU unit of a node: a whole GPU, or one MIG instance.
//  - Whole GPU: index = the node's GPU index, model = its configured Type ("a100"), mig_uuid "".
//    A GPU in MIG mode is never listed whole: only its instances are.
//  - MIG instance: index = the parent GPU's index, model = the profile ("3g.40gb"), mig_uuid =
//    the instance's "MIG-..." UUID. A request's gpu_model names a type or a profile; an empty
//    model ("any GPU") matches whole GPUs only, never MIG instances.
struct GpuSnap {
  uint32_t index = 0;
  std::string model;
  bool free = true;
  bool healthy = true;
  std::string mig_uuid;  // non-empty: a MIG instance of GPU `index`
  // (gpusched, --gpu-mem) a whole GPU's memory in MiB (0 = unknown: never serves a memory
  // request); a MIG instance's memory is its profile's (gpu_mem.h), this field is not read.
  uint64_t mem_mib = 0;
};

// A MIG-capable GPU as the dynamic MIG planner sees it (NodeSnap::mig_gpus). The builder lists
// every GPU whose model has MIG tables (common/mig_profiles.h), in MIG mode or not.
struct MigInstanceSnap {
  std::string profile;   // "3g.40gb"
  uint32_t start = 0;    // first memory slice
  std::string uuid;      // "MIG-..."
  bool free = true;      // no job holds it
};
struct MigGpuSnap {
  uint32_t index = 0;         // the node's GPU index
  std::string mig_model;      // the MIG table model name ("A100-SXM4-80GB"), see FindMigModel
  bool mig_enabled = false;   // false: the GPU is used whole today (its `instances` are empty)
  bool dynamic = false;       // MigStrategy=dynamic applies: the planner may change its layout
  bool busy = false;          // held whole by a job, unhealthy, or being reconfigured
  std::vector<MigInstanceSnap> instances;  // the current layout
  // (migdyn) A reconfiguration sent to the node and not answered yet: its instances are listed
  // not free (and busy is set); the migplan action holds them on the timeline until
  // `reconfig_until` (sent + SchedConfig::mig_reconfig_seconds) and gives the jobs it serves
  // reason MigReconfiguring with that expected start. 0 = none in flight.
  int64_t reconfig_until = 0;
  std::vector<uint64_t> reconfig_for;      // the pending jobs the reconfiguration serves
};

// GPU sharing pool of one whole GPU (NodeSnap::gpu_shares; issue 14 §3, Slurm's gres/mps and
// gres/shard). mps_total: the MPS percent the GPU offers (100 with gres.conf Mps=yes; 0 = no
// MPS); shards_total: its time-slice replicas (gres.conf Replicas=; 0 = none). *_used: what
// running jobs hold. Builder contract: a GPU with mps_used or shards_used > 0 has GpuSnap.free
// = false (it is not free whole); a GPU held whole (free = false, nothing used) offers no
// shares. One GPU shares in one mode at a time: MPS or shards, never both at once.
struct GpuShareSnap {
  uint32_t index = 0;  // the node's GPU index (GpuSnap::index of a whole GPU)
  uint32_t mps_total = 0;
  uint32_t mps_used = 0;
  uint32_t shards_total = 0;
  uint32_t shards_used = 0;
};

struct NodeSnap {
  std::string name;
  bool schedulable = true;     // up, registered, not draining
  uint32_t cpus_total = 0;
  uint32_t cpus_free = 0;
  uint64_t mem_total = 0;      // MiB
  uint64_t mem_free = 0;
  bool idle = true;            // nothing allocated (for --exclusive)
  std::vector<GpuSnap> gpus;
  std::vector<std::string> partitions;
  std::vector<std::string> features;
  uint32_t weight = 1;         // Slurm node Weight: lower is preferred
  std::vector<MigGpuSnap> mig_gpus;  // MIG-capable GPUs (dynamic MIG planning)
  std::vector<GpuShareSnap> gpu_shares;  // GPUs that can be shared (mps / shard), see above
};

struct Req {
  uint32_t cpus = 0;
  uint64_t mem_mib = 0;
  uint32_t gpus = 0;
  std::string gpu_model;  // "" = any whole GPU; a type ("a100") or a MIG profile ("3g.40gb")
  uint32_t mps = 0;       // --gres=mps:N: percent of one GPU's MPS server (0 = none)
  uint32_t shards = 0;    // --gres=shard:N: time-sliced replicas of one GPU (0 = none)
  // --- gpusched (issue 14) ---
  // --gpu-mem: with gpus > 0, each unit needs at least this memory; served by the smallest
  // fitting MIG profile or whole GPU of the partition (gpu_mem.h). 0 = not asked.
  uint64_t gpu_mem_mib = 0;
  // mps/shards from GPUs of this type only (--gres=mps:a100:50); "" = any GPU (gpu_share.h).
  std::string share_model;
};

struct GroupReq {
  std::string name;
  uint32_t count = 1;
  Req per_task;
  uint32_t tasks_per_node = 0;  // maximum per node; 0 = no limit
  Req per_node;
};

struct JobSnap {
  uint64_t id = 0;
  std::string partition;
  // Admin-set priority: > 0 overrides the multifactor formula; 0 = computed.
  int64_t priority = 0;
  int64_t submit_time = 0;
  std::vector<GroupReq> groups;
  uint32_t nodes_min = 0;
  uint32_t nodes_max = 0;      // 0 = unlimited
  bool exclusive = false;
  std::vector<std::string> nodelist;  // required nodes
  std::vector<std::string> exclude;
  int64_t begin_time = 0;
  // --- added by the scheduler issue (ctld fills these from JobRecord) ---
  std::string name;
  std::string user;
  std::string account;
  std::string qos;             // "" = SchedConfig::default_qos
  uint32_t gang_min = 0;       // 0 = every task (all-or-nothing)
  int64_t time_limit = 0;      // seconds; 0 = partition DefaultTime (else MaxTime)
  int64_t eligible_time = 0;   // for the age factor; 0 = submit_time
  int32_t nice = 0;
  std::string constraint;      // Slurm --constraint expression
  std::string dependency;      // Slurm --dependency string, unparsed
  uint64_t array_job_id = 0;   // 0 = not an array task
  uint32_t array_task_id = 0;
  uint32_t array_max_running = 0;  // the "%N" of --array; 0 = unlimited
  std::string hold_reason;     // "" = not held, else "JobHeldUser" / "JobHeldAdmin"
  double fairshare = 0;        // 0..1 fair-share factor (filled by the fair-share issue)
  // --- topology (issue 15) ---
  uint32_t switches = 0;         // --switches=N: at most N leaf switches (tree); 0 = not asked
  int64_t switches_wait_s = 0;   // ...waiting at most this long after eligible_time, then relax
  uint32_t segment = 0;          // --segment=N (block): placed in segments of N nodes, each in
                                 // one block; 0 = not asked
  // --- reservations (issue 17 §1; reservation.h) ---
  std::string reservation;       // --reservation=NAME; "" = none
};

struct PartitionSnap {
  std::string name;
  bool up = true;
  uint32_t max_nodes = 0;
  int64_t max_time = -1;       // seconds; -1 unlimited
  int64_t default_time = -1;   // seconds; -1 = max_time
  uint32_t priority_tier = 1;
  // TopologyMode=required|preferred (issue 15; PartitionName= line, QoS may override): required
  // = a job waits (reason Topology...) rather than spread over more leaves/blocks than its
  // lowest fitting tier; preferred = the lowest tier that has room now.
  bool topology_required = false;
};

// Resources one running job holds on one node.
struct NodeUse {
  std::string node;
  uint32_t cpus = 0;
  uint64_t mem_mib = 0;
  uint32_t gpus = 0;
  // --- issue 16 §4 preemption (preempt helper) ---
  // The GPU units held, so a victim's units can be handed to its preemptor. Empty with gpus > 0
  // (older builders, scenarios): the preempt action frees any `gpus` held whole GPUs.
  std::vector<uint32_t> gpu_indices;  // whole GPUs (node GPU index)
  std::vector<std::string> mig_uuids; // MIG instances
};

struct RunningSnap {
  uint64_t id = 0;
  std::string name;
  std::string user;
  std::string account;
  std::string qos;
  std::string partition;
  uint64_t array_job_id = 0;
  int64_t start_time = 0;
  int64_t end_time = kNever;   // expected end (start + limit); kNever if unlimited
  std::vector<NodeUse> nodes;
  // --- issue 16 §4 preemption (preempt helper; actions/preempt.cc) ---
  int64_t priority = 0;        // victims with lower priority go first (ctld: admin-set, else 0)
  bool preemptable = true;     // false: never a victim (suspended, completing, GPU shares)
  uint64_t preempted_for = 0;  // being preempted (grace time, ending) for this pending job
};

// A job that left the queue, for dependency evaluation.
struct FinishedSnap {
  uint64_t id = 0;
  bool ok = false;             // COMPLETED with exit code 0
};

// Network topology (issue 15) as the scheduler sees it. Built from common/topology_config.h by
// BuildTopologySnap (ctld/sched/topology.h) against the snapshot's node order; shared between
// cycles (immutable), so copying a snapshot stays cheap.
struct TopologySnap {
  TopologyKind kind = TopologyKind::kFlat;
  struct Switch {                   // kTree
    std::string name;
    int32_t parent = -1;            // index into switches; -1 = a root
    uint32_t level = 0;             // 0 = leaf (has nodes), parents are higher
    std::vector<uint32_t> nodes;    // snapshot node indices (leaves)
    std::vector<uint32_t> children; // switch indices
  };
  std::vector<Switch> switches;
  struct Block {                    // kBlock
    std::string name;
    std::vector<uint32_t> nodes;    // snapshot node indices, in file order
  };
  std::vector<Block> blocks;
  std::vector<uint32_t> block_sizes;  // ascending, in nodes
  std::vector<int32_t> node_leaf;     // per snapshot node: leaf switch or block index; -1 none
};

// An advance reservation (issue 17 §1, Slurm's scontrol create reservation; reservation.h).
// [start, end) is its first occurrence; DAILY/WEEKLY/HOURLY repeat it every period from there.
// Only jobs that name it (JobSnap::reservation) may use its nodes during an occurrence; they
// must start inside one, on its nodes (FLEX lifts both rules for them).
struct ReservationSnap {
  std::string name;
  int64_t start = 0;
  int64_t end = 0;
  std::vector<std::string> nodes;     // expanded names
  std::vector<std::string> users;     // who may use it (names)
  std::vector<std::string> accounts;  // ...or jobs of these accounts
  uint32_t flags = 0;                 // ResvFlag bits (reservation.h)
  std::string partition;              // PartitionName= ("" = none)
};

struct ClusterSnapshot {
  int64_t now = 0;
  std::shared_ptr<const TopologySnap> topology;  // null = flat
  std::vector<NodeSnap> nodes;
  std::vector<PartitionSnap> partitions;
  std::vector<JobSnap> pending;
  std::vector<RunningSnap> running;
  std::vector<FinishedSnap> finished;
  std::vector<ReservationSnap> reservations;  // issue 17 §1 (reservation.h)
};

}  // namespace tessera::sched
