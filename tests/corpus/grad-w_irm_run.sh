#!/bin/bash
# Source: mmmmayi/Grad-W, IRM/run.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH -o temp.out
#SBATCH --gres=gpu:2
#SBATCH -w ttnusa6
#SBATCH --cpus-per-task=16
#####SBATCH -p new

torchrun --standalone --nnodes=1 --nproc_per_node=2 train.py
