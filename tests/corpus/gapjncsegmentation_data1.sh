#!/bin/sh
# Source: mishaalkandapath/gapjncsegmentation, batch_scripts/julynarval/data1.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=12
#SBATCH --job-name=data1
#SBATCH --output=%x-%j.out
#SBATCH --error=%x-%j.out
#SBATCH --gpus-per-node=a100:1
#SBATCH --mem=64G
#SBATCH --time=11:0:0

python data.py
