#pragma once
// Slurm job array specifications (sbatch --array): "0-15%4", "1,3,5-7", "0-20:2".
// Indices are 0..kMaxArrayIndex, ranges ascending, steps >= 1, the %limit >= 1.
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera {

inline constexpr uint32_t kMaxArrayIndex = 1000000;

struct ArraySpec {
  std::vector<uint32_t> indices;  // ascending, unique
  uint32_t max_running = 0;       // the %limit; 0 = unlimited
};

// Validates and expands; errors say what was expected.
Result<ArraySpec> ParseArraySpec(const std::string& value);
// Compresses indices into "0-3,5,7-9:2"-free Slurm form ("0-3,5,7-9"); adds "%N" when limited.
std::string FormatArrayIndices(const std::vector<uint32_t>& indices, uint32_t max_running);

}  // namespace tessera
