#!/bin/sh
# Source: yukiwukii/imdb-with-transformer, Assignment2/finetune.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH --partition=UGGPU-TC1
#SBATCH --qos=normal
#SBATCH --gres=gpu:1
#SBATCH --mem=32G
#SBATCH --job-name=finetune
#SBATCH --time=06:00:00
#SBATCH --output=output_%x_%j.out
#SBATCH --error=error_%x_%j.err

python finetune/bart_finetune.py
