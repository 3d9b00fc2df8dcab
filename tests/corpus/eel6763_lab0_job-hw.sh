#!/bin/bash
# Source: jdr0317/EEL6763, Lab0/job-hw.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH --job-name=helloWorld_MPI
#SBATCH --mail-type=FAIL
#SBATCH --mail-user=youremailaddress
#SBATCH --account=eel6763
#SBATCH --qos=eel6763
#SBATCH --nodes=1
#SBATCH --ntasks=4
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=1
#SBATCH --mem-per-cpu=1000mb
#SBATCH -t 00:05:00
#SBATCH -o myoutput
#SBATCH -e myerr

srun --mpi=$HPC_PMIX ./hello_world
