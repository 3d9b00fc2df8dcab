#!/bin/bash
# Source: Ohtar10/cloud-labs, slurm/shared/scripts/hello-world.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.

#SBATCH -N1 -n1 --mem-per-cpu=100M -t00:10:00 --qos=normal
#SBATCH -J hello-world

hostname
