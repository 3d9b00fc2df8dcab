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
// a TESSERA_ twin of each SLURM_X (TESSERA_X; SLURMD_NODENAME's is TESSERA_NODENAME), and
//   MASTER_ADDR MASTER_PORT (when the grant has them)  RANK LOCAL_RANK WORLD_SIZE
//   LOCAL_WORLD_SIZE (PyTorch's names)
#include <cstdint>
#include <string>

#include "noded/job_env.h"
#include "tessera/v1/agent.pb.h"
#include "tessera/v1/step.pb.h"

namespace tessera::noded {

// `local_index` < grant.ranks_size().
EnvMap BuildTaskEnv(const tessera::v1::RunTasksRequest& req, const tessera::v1::StepGrant& grant,
                    uint32_t local_index, const std::string& node_name);

}  // namespace tessera::noded
