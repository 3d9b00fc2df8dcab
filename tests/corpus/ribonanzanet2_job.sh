#!/bin/bash
# Source: Shujun-He/RibonanzaNet2, job.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH --nodes 1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --job-name=shujun-job
#SBATCH --partition defq

accelerate launch --config_file FSDP.yaml run.py
