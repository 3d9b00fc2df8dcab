#!/bin/bash
#SBATCH --job-name=hello-tessera
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=1
#SBATCH --time=5:00
#SBATCH --output=hello-%j.out
# The example job of scripts/dev-cluster: prints where and as whom it runs.
echo "Hello from job $SLURM_JOB_ID ($SLURM_JOB_NAME) on $(hostname) as $(id -un) (uid $(id -u))"
echo "nodes: $SLURM_JOB_NODELIST (SLURM_NNODES=$SLURM_NNODES), tasks: $SLURM_NTASKS, cpus here: $SLURM_CPUS_ON_NODE"
echo "partition: $SLURM_JOB_PARTITION, submitted from $SLURM_SUBMIT_DIR"
sleep 1
echo "done"
