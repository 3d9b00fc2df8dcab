#include "noded/task_env.h"

#include <algorithm>
#include <vector>

#include "common/gpu_bind.h"
#include "common/hostlist.h"

namespace tessera::noded {

namespace {
// Number of hosts in a Slurm hostlist ("it[1-2],gpu3" -> 3); 0 when it cannot be parsed.
size_t HostCount(const std::string& nodelist) {
  if (nodelist.empty()) return 0;
  auto hosts = ExpandHostlist(nodelist);
  return hosts.ok() ? hosts->size() : 0;
}
}  // namespace

EnvMap BuildTaskEnv(const tessera::v1::RunTasksRequest& req, const tessera::v1::StepGrant& grant,
                    uint32_t local_index, const std::string& node_name) {
  NodeFacts node;
  node.node_name = node_name;
  return BuildTaskEnv(req, grant, local_index, node);
}

EnvMap BuildTaskEnv(const tessera::v1::RunTasksRequest& req, const tessera::v1::StepGrant& grant,
                    uint32_t local_index, const NodeFacts& node) {
  const std::string& node_name = node.node_name;
  EnvMap env(req.env().begin(), req.env().end());
  env.erase(kTrunGpuBindEnv);  // trun's word to noded, not the task's
  uint32_t rank = grant.ranks(static_cast<int>(local_index));
  EnvMap slurm;
  slurm["PROCID"] = std::to_string(rank);
  slurm["LOCALID"] = std::to_string(local_index);
  slurm["NODEID"] = std::to_string(grant.node_index());
  slurm["NTASKS"] = std::to_string(grant.ntasks());
  slurm["NPROCS"] = std::to_string(grant.ntasks());
  slurm["STEP_NUM_TASKS"] = std::to_string(grant.ntasks());
  slurm["STEP_ID"] = std::to_string(grant.step_id());
  slurm["STEPID"] = std::to_string(grant.step_id());
  slurm["STEP_NODELIST"] = grant.nodelist();
  slurm["STEP_NUM_NODES"] = std::to_string(HostCount(grant.nodelist()));
  slurm["LOCAL_TASKS"] = std::to_string(grant.ranks_size());
  slurm["JOB_ID"] = std::to_string(grant.job_id());
  slurm["JOBID"] = std::to_string(grant.job_id());
  if (grant.cpus_per_task() > 0) slurm["CPUS_PER_TASK"] = std::to_string(grant.cpus_per_task());
  std::string gtids;  // issue 19: the ranks on this node (srun's SLURM_GTIDS)
  for (uint32_t r : grant.ranks()) gtids += (gtids.empty() ? "" : ",") + std::to_string(r);
  slurm["GTIDS"] = gtids;
  for (const auto& [k, v] : slurm) {
    env["SLURM_" + k] = v;
    env["TESSERA_" + k] = v;
  }
  env["SLURMD_NODENAME"] = node_name;
  env["TESSERA_NODENAME"] = node_name;
  env["SLURM_TOPOLOGY_ADDR"] = node_name;  // issue 19: this node's, not the batch node's
  env["SLURM_TOPOLOGY_ADDR_PATTERN"] = "node";
  // A MASTER_ADDR/MASTER_PORT the step's caller exported wins (h19 s6: srun passes the
  // environment through; scripts export MASTER_ADDR=$(scontrol show hostnames | head -n1)).
  if (!grant.master_addr().empty() && !env.count("MASTER_ADDR"))
    env["MASTER_ADDR"] = grant.master_addr();
  if (grant.master_port() > 0 && !env.count("MASTER_PORT"))
    env["MASTER_PORT"] = std::to_string(grant.master_port());
  env["RANK"] = std::to_string(rank);
  env["LOCAL_RANK"] = std::to_string(local_index);
  env["WORLD_SIZE"] = std::to_string(grant.ntasks());
  env["LOCAL_WORLD_SIZE"] = std::to_string(grant.ranks_size());
  if (grant.has_alloc() && grant.alloc().cpus() > 0)  // issue 19: this node's, as srun
    env["SLURM_CPUS_ON_NODE"] = env["TESSERA_CPUS_ON_NODE"] = std::to_string(grant.alloc().cpus());
  if (grant.has_alloc()) {  // this node's own GPUs and HCAs, never the batch node's
    std::string job_gpus;  // the job's GPU indices here (SLURM_JOB_GPUS)
    for (uint32_t g : grant.alloc().gpu_indices())
      job_gpus += (job_gpus.empty() ? "" : ",") + std::to_string(g);
    tessera::v1::NodeAllocation step = grant.alloc();
    if (grant.step_gpus_set()) {  // the step's own GPUs, a part of the job's (trun --gpus...)
      step.clear_gpu_indices();
      step.clear_mig_uuids();
      for (uint32_t g : grant.step_gpu_indices()) step.add_gpu_indices(g);
      for (const auto& u : grant.step_mig_uuids()) step.add_mig_uuids(u);
    }
    // Issue 19 (h19 s7): --gpu-bind / --gpus-per-task: this task's part of the step's GPUs.
    size_t step_gpus = static_cast<size_t>(step.gpu_indices_size() + step.mig_uuids_size());
    bool bound = false;
    auto bind_it = req.env().find(kTrunGpuBindEnv);
    if (bind_it != req.env().end() && step_gpus > 0) {
      auto bind = ParseGpuBind(bind_it->second);
      if (bind.ok()) {
        std::vector<uint32_t> idx(step.gpu_indices().begin(), step.gpu_indices().end());
        std::sort(idx.begin(), idx.end());
        std::vector<std::string> migs(step.mig_uuids().begin(), step.mig_uuids().end());
        auto pos = TaskGpuPositions(*bind, step_gpus, local_index,
                                    static_cast<uint32_t>(grant.ranks_size()));
        bound = pos.size() < step_gpus;
        step.clear_gpu_indices();
        step.clear_mig_uuids();
        for (size_t p : pos) {
          if (p < idx.size()) step.add_gpu_indices(idx[p]);
          else step.add_mig_uuids(migs[p - idx.size()]);
        }
      }
    }
    SetNodeGpuEnv(&step, node.gpu_uuids, node.hcas, env, nullptr, true);
    if (bound)  // Slurm: SLURM_GPUS_ON_NODE stays the step's count on the node
      env["SLURM_GPUS_ON_NODE"] = env["TESSERA_GPUS_ON_NODE"] = std::to_string(step_gpus);
    SetRoceEnv(node.netdevs, env, true);
    env.erase("CUDA_MPS_PIPE_DIRECTORY");  // the batch node's, inherited through trun
    env.erase("CUDA_MPS_LOG_DIRECTORY");
    if (!node.mps_pipe.empty()) env["CUDA_MPS_PIPE_DIRECTORY"] = node.mps_pipe;
    if (!node.mps_log.empty()) env["CUDA_MPS_LOG_DIRECTORY"] = node.mps_log;
    env.erase("SLURM_STEP_GPUS");
    env.erase("TESSERA_STEP_GPUS");
    if (env.count("SLURM_JOB_GPUS"))
      env["SLURM_STEP_GPUS"] = env["TESSERA_STEP_GPUS"] = env["SLURM_JOB_GPUS"];
    if ((grant.step_gpus_set() || bound) && !job_gpus.empty())
      env["SLURM_JOB_GPUS"] = env["TESSERA_JOB_GPUS"] = job_gpus;
  }
  return env;
}

}  // namespace tessera::noded
