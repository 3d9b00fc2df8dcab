#!/bin/bash
# Source: maruthven/ScalableProject, C/mympi.sh (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH -J myMPI           # job name
#SBATCH -o myMPI.o%j       # output and error file name (%j expands to jobID)
#SBATCH -n 32              # total number of mpi tasks requested
#SBATCH -p development     # queue (partition)
#SBATCH -t 00:30:00        # run time (hh:mm:ss)
#SBATCH --mail-user=maruthve@tacc.utexas.edu
#SBATCH --mail-type=begin  # email me when the job starts
#SBATCH --mail-type=end    # email me when the job finishes

ibrun simulate.exe
