#!/bin/bash
# Source: AbhiB7/chat, sbatch.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
# set the number of nodes
#SBATCH --nodes=1

# number of CPU cores per task
#SBATCH --cpus-per-task=4 

# set max wallclock time
#SBATCH --time=10:00:00

# set name of job
#SBATCH --job-name=test123

# mail alert at start, end and abortion of execution
#SBATCH --mail-type=ALL

echo hello
