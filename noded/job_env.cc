#include "noded/job_env.h"

#include <algorithm>

#include "common/env_block.h"
#include "common/hostlist.h"

namespace tessera::noded {
namespace {

const tessera::v1::NodeAllocation* FindAlloc(const tessera::v1::LaunchJob& l,
                                             const std::string& node) {
  for (const auto& a : l.alloc())
    if (a.node() == node) return &a;
  return nullptr;
}

void SetDefault(EnvMap& env, const std::string& key, const std::string& value) {
  if (env.find(key) == env.end() && !value.empty()) env[key] = value;
}

std::string NodeList(const tessera::v1::LaunchJob& l, const std::string& self) {
  if (!l.nodelist().empty()) return l.nodelist();
  std::vector<std::string> nodes;
  for (const auto& a : l.alloc()) nodes.push_back(a.node());
  if (nodes.empty()) nodes.push_back(self);
  return CompressHostlist(nodes);
}

// The SLURM_* variables (without twins); GPUs handled separately.
EnvMap SlurmVars(const tessera::v1::LaunchJob& l, const NodeFacts& node, const UserInfo& user) {
  const auto* mine = FindAlloc(l, node.node_name);
  std::vector<uint32_t> tasks;
  uint32_t task_sum = 0;
  for (const auto& a : l.alloc()) {
    tasks.push_back(a.tasks());
    task_sum += a.tasks();
  }
  uint32_t ntasks = l.num_tasks() ? l.num_tasks() : (task_sum ? task_sum : 1);
  if (tasks.empty()) tasks.push_back(ntasks);
  std::string nnodes = std::to_string(l.alloc_size() ? l.alloc_size() : 1);
  std::string id = std::to_string(l.job_id());
  EnvMap v;
  v["SLURM_JOB_ID"] = id;
  v["SLURM_JOBID"] = id;
  v["SLURM_JOB_NAME"] = l.name();
  v["SLURM_JOB_NODELIST"] = v["SLURM_NODELIST"] = NodeList(l, node.node_name);
  v["SLURM_NNODES"] = v["SLURM_JOB_NUM_NODES"] = nnodes;
  v["SLURM_NTASKS"] = v["SLURM_NPROCS"] = std::to_string(ntasks);
  v["SLURM_CPUS_ON_NODE"] = std::to_string(mine ? mine->cpus() : 1);
  if (mine && mine->mem_mib() > 0) v["SLURM_MEM_PER_NODE"] = std::to_string(mine->mem_mib());
  v["SLURM_SUBMIT_DIR"] = l.submit_dir().empty() ? l.workdir() : l.submit_dir();
  v["SLURM_SUBMIT_HOST"] = l.submit_host();
  v["SLURM_JOB_PARTITION"] = l.partition();
  v["SLURM_JOB_ACCOUNT"] = l.account();
  v["SLURM_JOB_UID"] = std::to_string(l.uid());
  v["SLURM_JOB_USER"] = l.user().empty() ? user.name : l.user();
  v["SLURM_JOB_GID"] = std::to_string(l.gid());
  v["SLURM_NODEID"] = "0";
  v["SLURM_TASKS_PER_NODE"] = CompressTasksPerNode(tasks);
  v["SLURM_CLUSTER_NAME"] = node.cluster_name;
  v["SLURMD_NODENAME"] = node.node_name;
  if (l.restart_count() > 0) v["SLURM_RESTART_COUNT"] = std::to_string(l.restart_count());
  // Issue 19: more of sbatch's OUTPUT ENVIRONMENT VARIABLES (the options' own: tbatch).
  std::vector<uint32_t> cpus;
  for (const auto& a : l.alloc()) cpus.push_back(a.cpus());
  if (cpus.empty()) cpus.push_back(mine ? mine->cpus() : 1);
  v["SLURM_JOB_CPUS_PER_NODE"] = CompressTasksPerNode(cpus);
  // SLURM_JOB_QOS, SLURM_JOB_START_TIME, SLURM_JOB_END_TIME: ctld adds them to env_block.
  v["SLURM_PROCID"] = v["SLURM_LOCALID"] = v["SLURM_GTIDS"] = "0";  // the batch task
  v["SLURM_TOPOLOGY_ADDR"] = node.node_name;
  v["SLURM_TOPOLOGY_ADDR_PATTERN"] = "node";
  return v;
}

}  // namespace

std::string CompressTasksPerNode(const std::vector<uint32_t>& tasks) {
  std::string out;
  for (size_t i = 0; i < tasks.size();) {
    size_t j = i;
    while (j < tasks.size() && tasks[j] == tasks[i]) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(tasks[i]);
    if (j - i > 1) out += "(x" + std::to_string(j - i) + ")";
    i = j;
  }
  return out;
}

void SetNodeGpuEnv(const tessera::v1::NodeAllocation* mine,
                   const std::vector<std::string>& gpu_uuids, const std::vector<std::string>& hcas,
                   EnvMap& env, std::string* error, bool replace_inherited) {
  static const char* const kOwned[] = {
      "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
      "SLURM_JOB_GPUS", "TESSERA_JOB_GPUS", "SLURM_GPUS_ON_NODE", "TESSERA_GPUS_ON_NODE",
      "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "NCCL_IB_HCA",
      "UCX_NET_DEVICES"};
  if (replace_inherited)
    for (const char* k : kOwned) env.erase(k);
  std::string uuids, indices;
  size_t ngpus = 0;
  if (mine) {
    for (uint32_t idx : mine->gpu_indices()) {
      if (idx >= gpu_uuids.size()) {
        if (error) *error = "GPU index " + std::to_string(idx) + " allocated on node " +
                            mine->node() + " which has " + std::to_string(gpu_uuids.size()) +
                            " GPUs";
        continue;
      }
      uuids += (uuids.empty() ? "" : ",") + gpu_uuids[idx];
      indices += (indices.empty() ? "" : ",") + std::to_string(idx);
      ++ngpus;
    }
    for (const auto& m : mine->mig_uuids()) {
      uuids += (uuids.empty() ? "" : ",") + m;
      ++ngpus;
    }
  }
  uint32_t mps_pct = mine ? mine->mps_active_thread_percentage() : 0;
  uint64_t mps_mem = mine ? mine->mps_pinned_mem_mib() : 0;
  if (ngpus > 0 && mps_pct > 0)
    env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = std::to_string(std::min<uint32_t>(mps_pct, 100));
  if (ngpus > 0 && mps_mem > 0) {
    std::string lim;
    for (size_t i = 0; i < ngpus; ++i)
      lim += (i ? "," : "") + std::to_string(i) + "=" + std::to_string(mps_mem) + "M";
    env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = lim;
  }
  if (!hcas.empty()) {
    std::string h;
    for (const auto& x : hcas) h += (h.empty() ? "" : ",") + x;
    env["NCCL_IB_HCA"] = env["UCX_NET_DEVICES"] = h;
  }
  if (ngpus > 0) {
    env["CUDA_VISIBLE_DEVICES"] = env["NVIDIA_VISIBLE_DEVICES"] = uuids;
    env["SLURM_GPUS_ON_NODE"] = env["TESSERA_GPUS_ON_NODE"] = std::to_string(ngpus);
  }
  if (!indices.empty())
    env["SLURM_JOB_GPUS"] = env["TESSERA_JOB_GPUS"] = env["GPU_DEVICE_ORDINAL"] = indices;
}

EnvMap BuildJobEnv(const tessera::v1::LaunchJob& launch, const NodeFacts& node,
                   const UserInfo& user, std::string* error) {
  EnvMap env = launch.env_block().empty() ? EnvMap(launch.env().begin(), launch.env().end())
                                          : EnvBlockToMap(launch.env_block());
  SetDefault(env, "PATH", kDefaultPath);
  SetDefault(env, "HOME", user.home);
  SetDefault(env, "USER", user.name);
  SetDefault(env, "LOGNAME", user.name);
  SetDefault(env, "SHELL", user.shell.empty() ? "/bin/sh" : user.shell);
  env["ENVIRONMENT"] = "BATCH";
  for (const auto& [key, value] : SlurmVars(launch, node, user)) {
    env[key] = value;
    if (key == "SLURMD_NODENAME")
      env["TESSERA_NODENAME"] = value;
    else
      env["TESSERA_" + key.substr(6)] = value;
  }
  SetNodeGpuEnv(FindAlloc(launch, node.node_name), node.gpu_uuids, node.hcas, env, error, false);
  SetRoceEnv(node.netdevs, env, false);
  return env;
}

void SetRoceEnv(const std::vector<std::string>& netdevs, EnvMap& env, bool replace_inherited) {
  if (replace_inherited) env.erase("NCCL_SOCKET_IFNAME");
  std::string names;
  for (const auto& n : netdevs) names += (names.empty() ? "" : ",") + n;
  if (!names.empty()) env["NCCL_SOCKET_IFNAME"] = names;
}

std::vector<std::string> EnvToStrings(const EnvMap& env) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace tessera::noded
