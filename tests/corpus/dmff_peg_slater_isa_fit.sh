#!/bin/bash
# Source: deepmodeling/DMFF, examples/peg_slater_isa/fit.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH -N 1 -n 1 --gres=gpu:1
#SBATCH -t 24:00:00 -o out -e err
#SBATCH -p rtx3090

./fit.py > log
