#pragma once
// The environment of one task of a step (trun / StepAgent.RunTasks): a pure function of the
// request (trun's own environment), the controller's StepGrant for this node, the task's index
// among this node's ranks and the node's name. No I/O.
//
// Contents: the request's env first, then, overriding it:
//   SLURM_PROCID (global rank)  SLURM_LOCALID (index among this node's ranks)
//   SLURM_NODEID (grant.node_index)  SLURM_NTASKS SLURM_NPROCS SLURM_STEP_NUM_TASKS (grant.ntasks)
//   SLURM_STEP_ID SLURM_STEPID  SLURM_STEP_NODELIST  SLURM_STEP_NUM_NODES (hosts in nodelist)
//   SLURM_CPUS_PER_TASK (when > 0)  SLURM_LOCAL_TASKS (ranks here)  SLURMD_NODENAME
//   SLURM_JOB_ID SLURM_JOBID (grant.job_id)
//   issue 19: SLURM_GTIDS (this node's ranks), SLURM_TOPOLOGY_ADDR (this node),
//   SLURM_CPUS_ON_NODE (this node's CPUs of the job, when the grant carries the allocation)
// a TESSERA_ twin of each SLURM_X (TESSERA_X; SLURMD_NODENAME's is TESSERA_NODENAME), and
//   MASTER_ADDR MASTER_PORT (when the grant has them and the caller did not export them)  RANK LOCAL_RANK WORLD_SIZE
//   LOCAL_WORLD_SIZE (PyTorch's names)
// and, when the grant carries this node's allocation (grant.alloc), this node's devices as
// SetNodeGpuEnv computes them from node.gpu_uuids and node.hcas (CUDA_VISIBLE_DEVICES,
// NVIDIA_VISIBLE_DEVICES, SLURM_JOB_GPUS, GPU_DEVICE_ORDINAL, SLURM_GPUS_ON_NODE, NCCL_IB_HCA,
// UCX_NET_DEVICES, MPS limits, and CUDA_MPS_PIPE_DIRECTORY / CUDA_MPS_LOG_DIRECTORY from
// node.mps_pipe / mps_log), replacing the values trun inherited from the batch node, plus
// SLURM_STEP_GPUS (twin TESSERA_STEP_GPUS) = SLURM_JOB_GPUS (a step gets its job's GPUs here).
// A step that asked GPUs (grant.step_gpus_set, trun --gpus...) gets only its own: the devices
// variables and SLURM_STEP_GPUS list grant.step_gpu_indices / step_mig_uuids, SLURM_JOB_GPUS
// stays the job's GPU indices here.
// Issue 19 (h19 s7, srun --gpu-bind, --gpus-per-task): when the request's env has
// kTrunGpuBindEnv (common/gpu_bind.h: trun's effective binding; the key is not passed to the
// task), the task's devices variables and SLURM_STEP_GPUS list only its part of the step's GPUs
// here (TaskGpuPositions over the step's GPUs in index order, then its MIG slices, by
// local_index among grant.ranks); SLURM_GPUS_ON_NODE stays the step's count and SLURM_JOB_GPUS
// the job's, as in Slurm. A value that does not parse binds nothing (RunTasks refuses it first).
#include <cstdint>
#include <string>

#include "noded/job_env.h"
#include "tessera/v1/agent.pb.h"
#include "tessera/v1/step.pb.h"

namespace tessera::noded {

// `local_index` < grant.ranks_size(). `node`: name, GPU UUIDs by index, the job's HCAs here.
EnvMap BuildTaskEnv(const tessera::v1::RunTasksRequest& req, const tessera::v1::StepGrant& grant,
                    uint32_t local_index, const NodeFacts& node);
// The same for a node without GPUs and HCAs.
EnvMap BuildTaskEnv(const tessera::v1::RunTasksRequest& req, const tessera::v1::StepGrant& grant,
                    uint32_t local_index, const std::string& node_name);

}  // namespace tessera::noded
