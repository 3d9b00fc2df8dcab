#pragma once
// The SLURM_* variables sbatch derives from its options and puts into the job's environment
// (sbatch's OUTPUT ENVIRONMENT VARIABLES that only the options know; issue 19). Set only when
// the option was given, as sbatch: SLURM_NTASKS_PER_NODE, SLURM_CPUS_PER_TASK,
// SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, SLURM_GPUS, SLURM_GPUS_PER_NODE, SLURM_GPUS_PER_TASK,
// SLURM_CPUS_PER_GPU, SLURM_NTASKS_PER_GPU, SLURM_JOB_DEPENDENCY, SLURM_JOB_RESERVATION,
// SLURM_EXPORT_ENV, SLURM_OPEN_MODE, SLURM_GPU_BIND. The node adds the allocation's (job_env.h).
// A step (trun) reads SLURM_CPUS_PER_TASK, SLURM_GPUS_PER_TASK and SLURM_GPU_BIND back, as srun
// does.
#include "cli/lib/batch_options.h"
#include "tessera/v1/types.pb.h"

namespace tessera::cli {

void SetBatchOptionEnv(const BatchOptions& o, tessera::v1::JobSpec* spec);

}  // namespace tessera::cli
