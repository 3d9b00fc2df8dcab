#pragma once
// Slurm's output filename patterns: %j job id, %x job name, %u user, %A array master id,
// %a array index, %N first node's name, %% a literal '%'. A width ("%4j" -> zero-padded) is
// accepted as Slurm does. Unknown codes are kept verbatim. Relative results are joined to workdir.
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
};

// pattern "" means Slurm's default "slurm-%j.out" (or "slurm-%A_%a.out" for arrays).
std::string ExpandFilenamePattern(const std::string& pattern, const FilenameVars& v,
                                  const std::string& workdir);

// Expands only %A and %a (with widths) and leaves every other code, "%%" included, as written:
// the controller resolves array codes per element; the node resolves the rest.
// An empty pattern becomes "slurm-%A_%a.out" first.
std::string ExpandArrayCodes(const std::string& pattern, uint64_t array_job_id, uint32_t task_id);

}  // namespace tessera
