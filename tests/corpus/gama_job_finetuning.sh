#!/bin/bash
# Source: svyas23/GAMa, screening_net/job_finetuning.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH -n 1 
#SBATCH -c 5 
#SBATCH --mem-per-cpu=16G
#SBATCH -p gpu
#SBATCH --gres=gpu:1
#SBATCH -C gmem48
#SBATCH -o logs/output_finetuning_%j.out

python main_finetuning.py
