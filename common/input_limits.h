#pragma once
// Bounds on what a job request may hold, shared by the commands (an early, local error) and the
// controller (the authority: every request passes its checks, whatever client sent it).
//
//  - Times: --begin and --deadline at most kMaxTimeAheadS (about 100 years) after now, never
//    negative; time limits (--time, --time-min) at most kMaxTimeLimitS.
//  - exec's limits on a job's environment and arguments (Linux, fs/exec.c): each string, NUL
//    included, at most MAX_ARG_STRLEN (32 pages = 128 KiB); all strings plus one pointer per
//    string at most a quarter of the stack limit (2 MiB under the usual 8 MiB `ulimit -s`).
//    Of those 2 MiB, kNodeEnvReserveBytes are kept for the variables the node adds at launch
//    (SLURM_*, TESSERA_*, CUDA_VISIBLE_DEVICES, ...). A request over the limit would be
//    accepted and then fail at start with E2BIG: it is refused at submit instead.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera {

inline constexpr int64_t kMaxTimeAheadS = 100LL * 365 * 86400 + 25LL * 86400;  // 100 years
inline constexpr int64_t kMaxTimeLimitS = kMaxTimeAheadS;
inline constexpr size_t kMaxArgStrlen = 32 * 4096;         // MAX_ARG_STRLEN
inline constexpr size_t kExecArgLimitBytes = 2 << 20;      // 8 MiB stack limit / 4
inline constexpr size_t kNodeEnvReserveBytes = 64 << 10;

// `what` (e.g. "--begin") at epoch second `t`: 0 means unset and passes; a negative time or one
// more than kMaxTimeAheadS after `now` is kInvalidArgument naming the option and the bound.
Status CheckTimeAhead(std::string_view what, int64_t t, int64_t now);

// A time limit in seconds: 0 (unset) and -1 (unlimited) pass; other negatives and values over
// kMaxTimeLimitS are kInvalidArgument.
Status CheckTimeLimit(std::string_view what, int64_t seconds);

// What exec counts for `argv` and the NUL-separated `env_block` (common/env_block.h; a later
// entry of a KEY replaces an earlier one, so only the last one counts).
struct ExecSize {
  size_t bytes = 0;    // the strings with their NULs, plus one pointer per string
  size_t strings = 0;  // argv entries + distinct environment variables
};
ExecSize MeasureExec(std::string_view env_block, const std::vector<std::string_view>& argv);

// kInvalidArgument naming the limit when `argv` + `env_block` cannot be passed to exec (see
// above): a variable or argument over MAX_ARG_STRLEN, or more than kExecArgLimitBytes -
// kNodeEnvReserveBytes in all.
Status CheckExecLimits(std::string_view env_block, const std::vector<std::string_view>& argv);

}  // namespace tessera
