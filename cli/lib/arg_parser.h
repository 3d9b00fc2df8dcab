#pragma once
// getopt_long-compatible command-line parsing for the user commands (Slurm's option syntax):
//   --name=value, --name value, -x value, -xvalue, bundled short flags (-hl), "--" ends options,
//   unambiguous prefixes of long names (--part=debug), optional arguments only attached
//   (--nice=5, --nice). Errors use getopt's wording and name the option:
//   unrecognized option '--foo', invalid option -- 'z', option '--time' requires an argument.
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::cli {

enum class ArgKind { kNone, kRequired, kOptional };

struct OptionSpec {
  std::string long_name;  // without "--"; "" if short only
  char short_name = 0;    // 0 if long only
  ArgKind arg = ArgKind::kNone;
  int id = 0;
};

struct ParsedOption {
  int id = 0;
  std::string name;                  // canonical spelling: "--time" (or "-t" if short only)
  std::optional<std::string> value;  // set when the option took an argument
};

struct ParsedArgs {
  std::vector<ParsedOption> options;   // in command-line order
  std::vector<std::string> positionals;
};

// Parses `args` (without the program name). With `stop_at_positional` the first non-option
// and everything after it are positionals (sbatch: script and script arguments); otherwise
// options and positionals may be mixed (squeue, scancel).
Result<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                             const std::vector<OptionSpec>& specs, bool stop_at_positional);

}  // namespace tessera::cli
