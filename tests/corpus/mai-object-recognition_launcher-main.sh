#!/bin/bash
# Source: ZachParent/mai-object-recognition, practicals/p3/src/launcher-main.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.

###

#SBATCH --qos=debug

###

#SBATCH --cpus-per-task=40

#SBATCH --gres gpu:1

###SBATCH --time=24:00:00

###

#SBATCH --job-name="p3_main"

#SBATCH --chdir=.

#SBATCH --output=../data/03_logs/p3_main_%j.out

#SBATCH --error=../data/03_logs/p3_main_%j.err

###

time python main.py
