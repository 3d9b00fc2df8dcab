#pragma once
// The environment of a batch job: a pure function of the LaunchJob, facts about this node and
// the submitter's passwd entry. No I/O.
//
// Contents: the user's exported environment (LaunchJob.env_block, else .env) first;
// PATH/HOME/USER/LOGNAME/SHELL filled from passwd (PATH: a standard system path) only when
// missing; then, overriding the user's values, the Slurm variables:
//   SLURM_JOB_ID SLURM_JOBID SLURM_JOB_NAME SLURM_JOB_NODELIST SLURM_NODELIST SLURM_NNODES
//   SLURM_JOB_NUM_NODES SLURM_NTASKS SLURM_NPROCS SLURM_CPUS_ON_NODE SLURM_SUBMIT_DIR
//   SLURM_SUBMIT_HOST SLURM_JOB_PARTITION SLURM_JOB_ACCOUNT SLURM_JOB_UID SLURM_JOB_USER
//   SLURM_JOB_GID SLURM_NODEID(=0) SLURM_TASKS_PER_NODE SLURM_CLUSTER_NAME SLURM_MEM_PER_NODE
//   (when this node's mem_mib > 0) SLURM_GPUS_ON_NODE (when GPUs are allocated) SLURMD_NODENAME
//   issue 19: SLURM_JOB_CPUS_PER_NODE (the allocation's CPUs, "2(x2)"), SLURM_PROCID,
//   SLURM_LOCALID, SLURM_GTIDS (=0, the batch task), SLURM_TOPOLOGY_ADDR(_PATTERN); ctld puts
//   SLURM_JOB_QOS and SLURM_JOB_START/END_TIME into env_block, tbatch the options' own
//   (cli/lib/batch_env.h)
//   ENVIRONMENT=BATCH
// and a TESSERA_ twin of each SLURM_X named TESSERA_X (SLURMD_NODENAME's twin is
// TESSERA_NODENAME), plus CUDA_VISIBLE_DEVICES = comma-separated UUIDs of this node's allocated
// GPUs when any GPU is allocated here; when the allocation names MIG slices (mig_uuids) it is
// exactly those MIG UUIDs instead (whole GPUs of the same allocation are listed before them).
// MPS (alloc mps_active_thread_percentage / mps_pinned_mem_mib > 0):
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=<n> and CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="<gpu>=<n>M" for
// every allocated GPU index in CUDA_VISIBLE_DEVICES order (0..k-1, as CUDA numbers them).
// RDMA (NodeFacts.hcas, "mlx5_0:1"): NCCL_IB_HCA=mlx5_0:1,... and UCX_NET_DEVICES=mlx5_0:1,...
// and, for RoCE ports (NodeFacts.netdevs), NCCL_SOCKET_IFNAME=eth2,... (SetRoceEnv).
// As Slurm also: NVIDIA_VISIBLE_DEVICES = CUDA_VISIBLE_DEVICES; SLURM_JOB_GPUS (twin
// TESSERA_JOB_GPUS) and GPU_DEVICE_ORDINAL = this node's allocated GPU indices ("0,1"; whole
// GPUs only). All of these come from SetNodeGpuEnv (trun's tasks get them the same way).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/v1/agent.pb.h"

namespace tessera::noded {

struct NodeFacts {
  std::string node_name;
  std::string cluster_name;
  std::vector<std::string> gpu_uuids;  // indexed by GPU index
  std::vector<std::string> hcas;       // RDMA ports given to the job ("mlx5_0:1")
  std::vector<std::string> netdevs;    // RoCE interfaces of those ports (NCCL_SOCKET_IFNAME)
  // trun steps of an mps job: this node's MPS daemon directories of the job's GPU (empty: none)
  std::string mps_pipe, mps_log;
};


struct UserInfo {
  std::string name;
  std::string home;
  std::string shell;
};

using EnvMap = std::map<std::string, std::string>;

inline constexpr char kDefaultPath[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// Errors (as a message in `error`, env still built without it): a GPU index allocated here that
// this node does not have.
EnvMap BuildJobEnv(const tessera::v1::LaunchJob& launch, const NodeFacts& node,
                   const UserInfo& user, std::string* error = nullptr);

// The GPU and RDMA variables above for this node's allocation `mine` (nullptr: nothing allocated
// here), `gpu_uuids` indexed by GPU index and the job's HCA ports here. With
// `replace_inherited` every one of these variables already in `env` (trun's tasks: inherited
// from the batch node) is removed first, so `env` names this node's devices only; without it
// (the batch job) a submitter's own value survives where nothing is allocated. Errors as
// BuildJobEnv's.
void SetNodeGpuEnv(const tessera::v1::NodeAllocation* mine,
                   const std::vector<std::string>& gpu_uuids, const std::vector<std::string>& hcas,
                   EnvMap& env, std::string* error = nullptr, bool replace_inherited = true);

// NCCL_SOCKET_IFNAME = the job's RoCE interfaces (NodeFacts::netdevs), comma-separated, when
// there are any; with `replace_inherited` an inherited value is dropped first.
void SetRoceEnv(const std::vector<std::string>& netdevs, EnvMap& env, bool replace_inherited);

// Slurm's SLURM_TASKS_PER_NODE syntax: runs of equal counts as "N(xK)": {2,2,2,1} -> "2(x3),1".
std::string CompressTasksPerNode(const std::vector<uint32_t>& tasks);

// "KEY=VALUE" strings for execve.
std::vector<std::string> EnvToStrings(const EnvMap& env);

}  // namespace tessera::noded
