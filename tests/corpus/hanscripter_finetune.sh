#!/bin/bash
# Source: Kaifeng-Gao/HanScripter, finetune.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.

#SBATCH --job-name=finetune
#SBATCH --time=06:00:00
#SBATCH --partition=gpu
#SBATCH --gpus=a100:1
#SBATCH --mail-type=ALL

python finetune.py
