#! /bin/bash
# Source: 777pomingzi/URS, test.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH -p rtx2080
#SBATCH -N 1
#SBATCH --gres=gpu:2

python -m torch.distributed.launch --nproc_per_node=2 main.py
