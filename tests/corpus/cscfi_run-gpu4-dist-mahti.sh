#!/bin/bash
# Source: CSCfi/pytorch-ddp-examples, run-gpu4-dist-mahti.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH --account=project_2001659
#SBATCH --partition=gputest
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=40
#SBATCH --mem=0
#SBATCH --time=15
#SBATCH --gres=gpu:a100:4

srun python3 -m torch.distributed.run --standalone --nnodes=1 --nproc_per_node=4 $*
