"""bench/run-vs-slurm's parts (the script keeps the sections and main)."""
