#pragma once
// The typed cluster configuration: tessera.conf (slurm.conf syntax) plus gres.conf beside it.
// Loaded by ctld, noded and the CLI. Loading either succeeds with a complete, validated config
// (and a list of warnings for keys Tessera accepts but does not act on), or fails with the
// first error as "file:line: message". Nothing is half-applied.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config_file.h"
#include "common/status.h"
#include "common/topology_config.h"

namespace tessera {

struct NodeConfig {
  std::string name;
  std::string addr;       // NodeAddr, default the name
  uint16_t port = 6818;
  uint32_t cpus = 1;
  uint64_t real_memory_mib = 1;
  std::vector<std::string> features;
  std::map<std::string, uint32_t> gres_gpus;  // Gres=gpu:a100:2 -> {"a100": 2}; untyped: {"": n}
  uint32_t weight = 1;
  std::string initial_state;  // "", "DRAIN", "DOWN", "FUTURE"
  std::string reason;
  std::vector<std::string> partitions;  // filled from PartitionName lines
  std::string where;                    // file:line of the NodeName line
  // MigStrategy=dynamic|static (issue 14): "" = not set on the node (its partitions decide,
  // see MigDynamic); "dynamic" lets the scheduler re-lay the MIG GPUs of the node.
  std::string mig_strategy;
};

// What happens to a running job when a GPU it holds fails (an XID not in GpuIgnoredXids, or a
// lost device): PartitionName=... GpuFailurePolicy=requeue|fail|ignore (issue 14, default
// requeue). requeue: every node of the job is stopped and the job requeued; fail: the job ends
// FAILED with a reason naming the GPU; ignore: it runs on. The GPU is drained in every case.
enum class GpuFailurePolicy { kRequeue, kFail, kIgnore };
// "requeue" | "fail" | "ignore" (any case); else InvalidArgument("expected ...").
Result<GpuFailurePolicy> ParseGpuFailurePolicy(const std::string& text);
const char* GpuFailurePolicyName(GpuFailurePolicy p);

struct PartitionConfig {
  std::string name;
  std::vector<std::string> nodes;
  std::string nodes_expr;
  bool is_default = false;
  bool up = true;
  int64_t max_time_s = -1;      // -1 unlimited
  int64_t default_time_s = -1;  // -1: use max_time_s
  uint32_t max_nodes = 0;       // 0 unlimited
  uint32_t priority_tier = 1;
  GpuFailurePolicy gpu_failure_policy = GpuFailurePolicy::kRequeue;
  std::string where;
  std::string mig_strategy;     // MigStrategy=dynamic|static; "" = not set (static)
  // TopologyMode=required|preferred (issue 15; default preferred): required = a job waits rather
  // than spread over more leaves/blocks than its lowest fitting tier (sched::PartitionSnap).
  bool topology_required = false;
};

// One GPU declaration from gres.conf: `NodeName=n[3-4] Name=gpu Type=a100 Count=2
// Simulated=yes MemoryMiB=40960`. Simulated GPUs are created by noded's simulated backend.
struct GpuDecl {
  std::string model;
  uint32_t count = 0;
  uint64_t memory_mib = 0;
  bool simulated = false;
  std::string where;
  bool mps = false;       // gres.conf Mps=yes: each GPU offers 100 MPS percent (gres/mps)
  uint32_t replicas = 0;  // gres.conf Replicas=N: time-slice shards per GPU (gres/shard)
  // Slurm's separate `Name=mps Count=N` / `Name=shard Count=N` lines (common/gres_shares.h):
  // per GPU of this line (size = count), its gres/mps count and its shard count. Empty = no such
  // line for the node; then MpsCount(i) = mps ? 100 : 0 and ShardCount(i) = replicas. A filled
  // mps_counts sets mps when any count is above 0.
  std::vector<uint32_t> mps_counts, shard_counts;
  uint32_t MpsCount(uint32_t i) const {
    return mps_counts.empty() ? (mps ? 100 : 0) : (i < mps_counts.size() ? mps_counts[i] : 0);
  }
  uint32_t ShardCount(uint32_t i) const {
    return shard_counts.empty() ? replicas : (i < shard_counts.size() ? shard_counts[i] : 0);
  }
};

struct ClusterConfig {
  std::string path;         // the tessera.conf that was loaded
  std::string cluster_name = "tessera";
  std::string ctld_host = "localhost";
  std::string ctld_addr;    // address to connect to; default ctld_host
  uint16_t ctld_port = 6817;
  std::string state_dir = "/var/lib/tessera";
  std::string spool_dir = "/var/spool/tessera/%n";  // %n = node name
  std::string log_dir;                               // "" = stderr
  std::string munge_socket;                          // "" = munge's default
  // ControllerSocket: Unix socket where ctld also answers the commands of users on its own
  // host (identity from the kernel, SO_PEERCRED; no munge, no HTTP/2). Default
  // /run/tessera/ctld-<SlurmctldPort>.sock; "" (ControllerSocket=none) turns it off.
  std::string ctld_socket;
  std::string tls_cert, tls_key, tls_ca;             // all three or none
  int64_t node_timeout_s = 60;       // SlurmdTimeout
  int64_t heartbeat_interval_s = 0;  // 0 = node_timeout_s / 3
  int64_t kill_wait_s = 30;          // KillWait
  int64_t min_job_age_s = 300;       // MinJobAge: finished jobs stay visible in tqueue
  int64_t sched_interval_s = 5;
  uint32_t max_array_size = 1001;     // MaxArraySize: array indices must be below it
  // EnforcePartLimits (issue 19): "NO" (Slurm's default: a job over its partition's MaxTime
  // waits, reason PartitionTimeLimit), "ANY" or "ALL" (refused at submit); YES = ANY.
  std::string enforce_part_limits = "NO";
  std::string cluster_user = "root"; // SlurmUser / TesseraUser
  std::vector<std::string> admins;   // TesseraAdmins
  std::vector<std::string> operators;
  std::vector<NodeConfig> nodes;
  std::vector<PartitionConfig> partitions;
  std::map<std::string, std::vector<GpuDecl>> gpus;  // node -> declarations from gres.conf
  std::vector<std::string> warnings;  // "file:line: ..." for accepted-but-ignored keys
  // --- topology (issue 15) ---
  TopologyKind topology_kind = TopologyKind::kFlat;  // TopologyPlugin=
  // TopologyFile= (relative paths are relative to tessera.conf's directory); default
  // topology.conf beside tessera.conf. Only read when topology_kind is not kFlat.
  std::string topology_file;
  // The loaded topology.conf: set by ctld's LoadConfig (ctld/config_loader.h), which reads the
  // file; null in the CLI and noded (they do not read topology.conf) and for kFlat.
  std::shared_ptr<const TopologyConfig> topology;

  const NodeConfig* FindNode(const std::string& name) const;
  const PartitionConfig* FindPartition(const std::string& name) const;
  const PartitionConfig* DefaultPartition() const;
  // MigStrategy of `node`: its NodeName line's when set, else dynamic when any partition holding
  // it says MigStrategy=dynamic; static otherwise (and for unknown nodes).
  bool MigDynamic(const std::string& node) const;
  bool TlsEnabled() const { return !tls_cert.empty(); }
  int64_t HeartbeatInterval() const;
  // spool_dir with %n replaced.
  std::string SpoolDirFor(const std::string& node) const;
};

// Loads `path` and, when present, gres.conf in the same directory.
Result<ClusterConfig> LoadClusterConfig(const std::string& path);
// As above from already-parsed lines (gres_lines may be empty); for tests.
Result<ClusterConfig> BuildClusterConfig(const std::vector<ConfigLine>& lines,
                                         const std::vector<ConfigLine>& gres_lines);

// The config path a program uses: $TESSERA_CONF, else /etc/tessera/tessera.conf.
std::string DefaultConfigPath();

}  // namespace tessera
