#!/bin/bash
# Source: vahmohh/transformer, job.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH --partition=gpu4          # partition (queue)
#SBATCH --tasks=80               # a prefix of --tasks-per-node, as getopt reads it
#SBATCH --mem=40G                 # memory per node
#SBATCH --time=2:00              # total runtime
#SBATCH --output=finall.out    # filename for STDOUT
#SBATCH --error=finall.err     # filename for STDERR

python3 train.py
