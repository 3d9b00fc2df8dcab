#!/bin/bash
# Source: HLasse/Data-Science-Exam, GenomeDK_genbert-master/finetune.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH --partition gpu
#SBATCH --mem 64g
#SBATCH -c 8
#SBATCH --gres=gpu:1

python finetune.py -t TRUE
