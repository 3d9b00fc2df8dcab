#!/bin/bash
# Source: jamesafranke/ViT_clouds, scripts/jim_bash.bash (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH --time=00:30:00
#SBATCH --job-name=test
#SBATCH --output=%x_%A.out
#SBATCH --error=%x_%A.err
#SBATCH --partition=gpu
#SBATCH --gres=gpu:4

torchrun --nnodes=1:2 --nproc_per_node=4 torchrun_test.py
