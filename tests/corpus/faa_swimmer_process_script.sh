#!/bin/bash
# Source: StephWilleniams/FAA_swimmer, code/process_script.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.

#SBATCH --nodes=1  #asked for 1 node
#SBATCH --ntasks=10 #asked for 10 cores
# #SBATCH --partition medium  #this job will submit to medium partition
#SBATCH --array=1-5
#SBATCH --mem=1G
#SBATCH --time=0-00:15:00 # 15 minutes
#SBATCH --output=test_%A_%a.qlog
#SBATCH --job-name=test1  #the job name
#SBATCH --export=ALL

python process.py $SLURM_ARRAY_TASK_ID
