#pragma once
// Parsers for tbatch's structured option values (pure; errors say what was expected):
//   --signal=[{R|B}:]SIG[@TIME]   --array=0-15%4 / 1,3,5-7 / 0-20:2   --switches=N[@TIME]
//   --open-mode=append|truncate   #TESSERA --task-group=NAME:COUNT[:KEY=VALUE,...]
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/array_spec.h"
#include "common/status.h"

namespace tessera::cli {

struct SignalSpec {
  int number = 0;
  int64_t time_s = 60;  // sbatch's default lead time
  bool batch_only = false;
};
// "USR1", "B:SIGUSR1@90", "R:10@30" (R is accepted and treated as plain).
Result<SignalSpec> ParseSignalSpec(const std::string& value);

// Validates a Slurm array spec; returns the number of indices. Indices must be 0..kMaxArrayIndex,
// ranges ascending, steps >= 1, the %limit >= 1.
// (Thin wrappers over common/array_spec.h.)
Result<uint32_t> ValidateArraySpec(const std::string& value);
// The indices of a valid array spec in ascending order (the %limit ignored).
Result<std::vector<uint32_t>> ExpandArraySpec(const std::string& value);

struct SwitchesSpec {
  uint32_t count = 0;
  int64_t wait_s = 0;
};
Result<SwitchesSpec> ParseSwitches(const std::string& value);

// Tessera-only: one task group. Keys: cpus, mem (per task), gpus, gpu-model, tasks-per-node.
struct TaskGroupSpec {
  std::string name;
  uint32_t count = 1;
  uint32_t cpus = 1;
  uint64_t mem_mib = 0;
  uint32_t gpus = 0;
  std::string gpu_model;
  uint32_t tasks_per_node = 0;
};
Result<TaskGroupSpec> ParseTaskGroup(const std::string& value);

}  // namespace tessera::cli
