#pragma once
// Slurm's output filename patterns (sbatch/srun "FILENAME PATTERN"): %j job id, %J job id plus
// ".step" for a regular step (the batch step: job id only), %s step id ("batch" for the batch
// step), %x job name, %u user, %A array master id, %a array index, %b array index modulo 10,
// %N node name, %n node index in the job, %t task rank, %r restart count, %% a literal '%'.
// A width ("%4j" -> zero-padded, at most 10) is accepted as Slurm does. Unknown codes are kept
// verbatim. A pattern containing a backslash is not expanded at all; its backslashes are
// removed (Slurm's escape). Relative results are joined to workdir.
#include <cstdint>
#include <string>

namespace tessera {

struct FilenameVars {
  uint64_t job_id = 0;
  std::string job_name;
  std::string user;
  uint64_t array_job_id = 0;   // 0: not an array job (%A -> job id)
  int64_t array_index = -1;    // -1: not an array job (%a -> 4294967294 as Slurm)
  std::string node;
  // Additive (issue 19): step, node index, task rank and restart count for %J %s %n %t %r.
  int64_t step_id = -1;        // -1: the batch step (%J -> job id, %s -> "batch")
  uint32_t node_id = 0;
  uint32_t task_id = 0;
  uint32_t restart_count = 0;
};

// pattern "" means Slurm's default "slurm-%j.out" (or "slurm-%A_%a.out" for arrays).
std::string ExpandFilenamePattern(const std::string& pattern, const FilenameVars& v,
                                  const std::string& workdir);

// Expands only %A, %a and %b (with widths) and leaves every other code, "%%" included, as written:
// the controller resolves array codes per element; the node resolves the rest.
// An empty pattern becomes "slurm-%A_%a.out" first.
std::string ExpandArrayCodes(const std::string& pattern, uint64_t array_job_id, uint32_t task_id);

}  // namespace tessera
