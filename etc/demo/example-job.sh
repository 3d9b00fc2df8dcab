#!/bin/bash
#SBATCH --job-name=hello-tessera
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=1
#SBATCH --time=5:00
#SBATCH --output=hello-%j.out
# The example job of scripts/dev-cluster: prints where and as whom it runs.
set -eo pipefail
echo "Hello from job $SLURM_JOB_ID ($SLURM_JOB_NAME) on $(hostname) as $(id -un) (uid $(id -u))"
echo "nodes: $SLURM_JOB_NODELIST (SLURM_NNODES=$SLURM_NNODES), tasks: $SLURM_NTASKS, cpus here: $SLURM_CPUS_ON_NODE"
echo "partition: $SLURM_JOB_PARTITION, submitted from $SLURM_SUBMIT_DIR"
# One task per allocated slot on every node of the job, like srun:
trun -l bash -c 'echo "rank $SLURM_PROCID of $SLURM_NTASKS on node $SLURMD_NODENAME"' | sort
echo "done"
