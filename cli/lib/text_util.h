#pragma once
// Small string helpers shared by the commands: splitting, case, Slurm's column padding and
// Slurm's duration/time formats as the user commands print them.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::cli {

// Splits on `sep`; empty pieces are kept ("a,,b" -> {"a","","b"}); "" -> {}.
std::vector<std::string> Split(std::string_view s, char sep);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
std::string ToLower(std::string_view s);
std::string ToUpper(std::string_view s);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
bool StartsWith(std::string_view s, std::string_view prefix);
std::string Trim(std::string_view s);

// One column as squeue/sinfo print it (their _print_str): width 0 prints the value as is;
// otherwise the value is right- or left-justified in `width` columns and, when `cut` is set,
// truncated to `width` characters.
std::string PadField(std::string_view value, int width, bool right, bool cut);

// Elapsed/limit seconds as squeue prints them: "M:SS", "H:MM:SS", "D-HH:MM:SS"; negative
// values or more than a year print "INVALID" (squeue's _print_secs).
std::string SqueueSecs(int64_t seconds);
// As sacct and scontrol print durations (secs2time_str): "HH:MM:SS" or "D-HH:MM:SS";
// negative = "UNLIMITED".
std::string SacctSecs(int64_t seconds);

// Splits a "#SBATCH" directive's text like sbatch does: whitespace separates words, single and
// double quotes group (and are removed), and an unquoted '#' starts a comment.
// Error on an unterminated quote.
Result<std::vector<std::string>> SplitDirectiveWords(std::string_view text);

// Parses a comma-separated list of job ids ("12,13 14" style pieces are passed one by one).
// Error names the bad piece: invalid job id "x".
Result<std::vector<uint64_t>> ParseJobIdList(std::string_view s);

}  // namespace tessera::cli
