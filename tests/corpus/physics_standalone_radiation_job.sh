#!/bin/bash -l
# Source: tomlausberg/physics_standalone, radiation/job.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#
#SBATCH --nodes=1
#SBATCH --ntasks-per-core=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=12
#SBATCH --hint=nomultithread

export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK
srun ./job.sh
