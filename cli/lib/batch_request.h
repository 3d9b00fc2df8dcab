#pragma once
// From tbatch's inputs to a JobSpec: option precedence (directives < SBATCH_* environment <
// command line), --export, and the translation of Slurm's flat options into one task group.
//
// Translation (the controller only knows task groups): one TaskGroup "main" with
//   count          = -n, else nodes_min * --ntasks-per-node, else --ntasks-per-node, else
//                    nodes_min, else 1
//   per_task.cpus  = -c (default 1)
//   per_task.mem   = --mem-per-cpu * cpus-per-task        per_node.mem = --mem
//   per_node.gpus  = --gpus-per-node / --gres=gpu (both per node in Slurm), with the model
//   per_task.gpus  = -G total / count (an error unless it divides evenly)
//   tasks_per_node = --ntasks-per-node
// nodes_min/max from -N; workdir = -D made absolute against the cwd (default the cwd); script =
// the file, stdin or the --wrap script; argv = {script path, script args...} (Slurm's job argv:
// argv[0] is shown as the job's Command, the rest are passed to the script); env per --export.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/lib/batch_options.h"
#include "common/status.h"
#include "tessera/v1/types.pb.h"

namespace tessera::cli {

struct BatchCommandLine {
  BatchOptions options;
  std::vector<std::string> positionals;  // script path and its arguments
};

// Parses tbatch's command line (options stop at the script name).
Result<BatchCommandLine> ParseBatchCommandLine(const std::vector<std::string>& args,
                                               int64_t now);

// Directives from `script` < SBATCH_* from `env` < `cmdline`. Errors name the script line
// ("script line 4: invalid --time value \"60:\"") or the environment variable.
Result<BatchOptions> ResolveBatchOptions(const BatchOptions& cmdline, const std::string& script,
                                         const std::map<std::string, std::string>& env,
                                         int64_t now);

// sbatch's --export: unset or "ALL" = the whole environment; "NONE" = only SLURM_* variables;
// "[ALL,]VAR[=value],..." = (everything if ALL, else only SLURM_*) plus the listed variables
// (a name without "=" copies the current value, when set).
Result<std::map<std::string, std::string>> BuildExportEnv(
    const std::optional<std::string>& spec, const std::map<std::string, std::string>& env);

struct ScriptSource {
  std::string text;
  std::string path;               // as given on the command line; "" for stdin and --wrap
  std::vector<std::string> args;  // script arguments
};

Result<tessera::v1::JobSpec> BuildJobSpec(const BatchOptions& opts, const ScriptSource& script,
                                          const std::map<std::string, std::string>& env,
                                          const std::string& cwd);

// "dir" relative to "cwd" -> absolute ("/" joined, "." and ".." left to the kernel).
std::string AbsolutePath(const std::string& path, const std::string& cwd);

}  // namespace tessera::cli
