/* tessera-bench-noop: the process-start floor of a command (bench/run-vs-slurm, section
 * "submit"): a statically linked program that does nothing, run by the same shell loop as tbatch.
 * Its rate is the most any command could reach on this machine, so CLI figures are read beside
 * it (issue 20 §1). */
int main() { return 0; }
