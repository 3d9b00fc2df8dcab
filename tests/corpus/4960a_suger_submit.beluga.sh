#!/bin/bash
# Source: rkenny/4960A, SUGER/submit.beluga.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=1
#SBATCH --gpus-per-node=1
#SBATCH --mem-per-cpu=8G

python train.py
