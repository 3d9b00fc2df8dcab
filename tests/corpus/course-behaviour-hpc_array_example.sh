#!/bin/bash
# Source: neuroinformatics-unit/course-behaviour-hpc, demo/array_example.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.

#SBATCH -p fast # partition (queue)
#SBATCH -N 1   # number of nodes
#SBATCH --mem 1G # memory pool for all cores
#SBATCH -n 1 # number of cores
#SBATCH -t 0-0:1 # time (D-HH:MM)
#SBATCH -o slurm_array_%A-%a.out
#SBATCH -e slurm_array_%A-%a.err
#SBATCH --array=0-9%4

./multiply.sh $SLURM_ARRAY_TASK_ID 10
