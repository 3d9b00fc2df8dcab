#!/bin/bash
# Source: faisalagustp/mpitest, vv1.t (public GitHub repository). Directives as written there;
# the commands after them are abridged for the corpus.
#SBATCH -J vv1     # job name
#SBATCH -o vv1.o%j       # output and error file name (%j expands to jobID)
#SBATCH -n 16              # total number of mpi tasks requested
#SBATCH -p normal     # queue (partition)
#SBATCH -t 01:30:00        # run time (hh:mm:ss)
#SBATCH --mail-user=faisalat@ui.ac.id
#SBATCH --mail-type=begin  # email me when the job starts
#SBATCH --mail-type=end    # email me when the job finishes

ibrun ./vv1
