#pragma once
// Slurm time-limit and memory-size syntax.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera {

inline constexpr int64_t kUnlimited = -1;

// Parses a Slurm time limit into seconds, as Slurm's time_str2secs:
//   "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S"; "UNLIMITED", "INFINITE" and "-1" give
//   kUnlimited. "60" = 3600, "60:15" = 3615, "1-1:60:15" = 93615. Blanks, empty fields
//   ("60:") and negative numbers are errors.
Result<int64_t> ParseTimeLimit(std::string_view s);

// Formats seconds like Slurm's squeue/sacct: "M:SS", "H:MM:SS", "D-HH:MM:SS";
// kUnlimited (or any negative value) as "UNLIMITED".
std::string FormatDuration(int64_t seconds);

// Parses a memory size with an optional unit suffix K, M, G, T (powers of 1024, case-insensitive,
// optional trailing "B"); no suffix means MiB, as sbatch's --mem. Returns MiB, rounding K up.
Result<uint64_t> ParseMemMiB(std::string_view s);

// Formats MiB as Slurm prints memory (exact units): "512M", "2000M", "4G", "1.50G".
std::string FormatMemMiB(uint64_t mib);

// Parses a non-negative decimal integer that must fill the whole string.
Result<uint64_t> ParseUint(std::string_view s, std::string_view what);

// Formats an epoch time as Slurm does ("2026-11-29T08:04:40", local time); 0 as "N/A"
// (or "Unknown" when unknown_word is set).
std::string FormatTimestamp(int64_t epoch, bool unknown_word = false);

}  // namespace tessera
