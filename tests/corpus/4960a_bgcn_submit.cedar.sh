#!/bin/bash
# Source: rkenny/4960A, BGCN/submit.cedar.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=1
#SBATCH --gpus-per-node=1
#SBATCH --mem-per-cpu=32G

python3 main.py
