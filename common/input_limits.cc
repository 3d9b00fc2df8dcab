#include "common/input_limits.h"

#include <algorithm>
#include <string>
#include <unordered_set>

namespace tessera {
namespace {

// The entries of an environment block, the last occurrence of each KEY only (latest first).
template <typename Fn>
void ForEachLastEntry(std::string_view block, Fn fn) {
  std::vector<std::string_view> entries;
  for (size_t pos = 0; pos < block.size();) {
    size_t nul = block.find('\0', pos);
    if (nul == std::string_view::npos) nul = block.size();
    if (nul > pos) entries.push_back(block.substr(pos, nul - pos));
    pos = nul + 1;
  }
  std::unordered_set<std::string_view> seen;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it)
    if (seen.insert(it->substr(0, it->find('='))).second) fn(*it);
}

}  // namespace

Status CheckTimeAhead(std::string_view what, int64_t t, int64_t now) {
  if (t == 0) return Status::Ok();
  if (t < 0)
    return InvalidArgument(std::string(what) + ": time " + std::to_string(t) + " is before 1970");
  if (t > now + kMaxTimeAheadS)
    return InvalidArgument(std::string(what) +
                           ": time is more than 100 years from now (epoch second " +
                           std::to_string(t) + "); times must lie within 100 years");
  return Status::Ok();
}

Status CheckTimeLimit(std::string_view what, int64_t seconds) {
  if (seconds == 0 || seconds == -1) return Status::Ok();
  if (seconds < 0)
    return InvalidArgument(std::string(what) + ": negative time limit " +
                           std::to_string(seconds) + " s");
  if (seconds > kMaxTimeLimitS)
    return InvalidArgument(std::string(what) + ": time limit of " + std::to_string(seconds) +
                           " s is more than 100 years; use UNLIMITED for no limit");
  return Status::Ok();
}

ExecSize MeasureExec(std::string_view env_block, const std::vector<std::string_view>& argv) {
  ExecSize s;
  auto add = [&s](std::string_view str) {
    s.bytes += str.size() + 1 + sizeof(void*);
    s.strings++;
  };
  for (auto a : argv) add(a);
  ForEachLastEntry(env_block, add);
  return s;
}

Status CheckExecLimits(std::string_view env_block, const std::vector<std::string_view>& argv) {
  for (size_t i = 0; i < argv.size(); ++i)
    if (argv[i].size() + 1 > kMaxArgStrlen)
      return InvalidArgument("argument " + std::to_string(i) + " of the job is " +
                             std::to_string(argv[i].size()) + " bytes; exec takes at most " +
                             std::to_string(kMaxArgStrlen - 1) +
                             " bytes per argument (MAX_ARG_STRLEN)");
  // Fast path (every submission): counting every entry, earlier values of a KEY too, bounds the
  // exact figure from above, without allocating.
  size_t entries = 0, longest = 0, upper = 0;
  for (size_t pos = 0; pos < env_block.size();) {
    size_t nul = env_block.find('\0', pos);
    if (nul == std::string_view::npos) nul = env_block.size();
    entries++;
    longest = std::max(longest, nul - pos);
    pos = nul + 1;
  }
  upper = env_block.size() + 1 + entries * sizeof(void*);
  for (auto a : argv) upper += a.size() + 1 + sizeof(void*);
  if (longest + 1 <= kMaxArgStrlen && upper <= kExecArgLimitBytes - kNodeEnvReserveBytes)
    return Status::Ok();
  Status too_long = Status::Ok();
  ForEachLastEntry(env_block, [&](std::string_view entry) {
    if (too_long.ok() && entry.size() + 1 > kMaxArgStrlen)
      too_long = InvalidArgument(
          "environment variable " + std::string(entry.substr(0, entry.find('='))) + " is " +
          std::to_string(entry.size()) + " bytes (NAME=VALUE); exec takes at most " +
          std::to_string(kMaxArgStrlen - 1) + " bytes per variable (MAX_ARG_STRLEN)");
  });
  if (!too_long.ok()) return too_long;
  ExecSize s = MeasureExec(env_block, argv);
  size_t limit = kExecArgLimitBytes - kNodeEnvReserveBytes;
  if (s.bytes > limit)
    return InvalidArgument(
        "environment and arguments too large to start the job: " + std::to_string(s.strings) +
        " strings take " + std::to_string(s.bytes) + " bytes as exec counts them (with one " +
        std::to_string(sizeof(void*)) + "-byte pointer each); the limit is " +
        std::to_string(limit) + " bytes (exec's 2 MiB, a quarter of the 8 MiB stack limit, less " +
        std::to_string(kNodeEnvReserveBytes >> 10) + " KiB kept for the variables the node adds)");
  return Status::Ok();
}

}  // namespace tessera
