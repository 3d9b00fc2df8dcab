#!/bin/bash
# Source: cr718c3ramire/CLG2023_AMAREL, AMAREL/R4L10^4_test/a.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.

#SBATCH --partition=main

#SBATCH --job-name=SM-ARR

#SBATCH --array=1-10%10

#SBATCH --cpus-per-task=1

#SBATCH --mem=2G

#SBATCH --time=48:00:00

#SBATCH --output=R4SlurmN8120-%A.%a.out # stdout file

#SBATCH --error=R4SlurmN8120-%A.%a.err  # stderr file

srun ./out
