#pragma once
// tbatch's options (sbatch's spellings) as one struct of "set or not" fields, the option table
// shared by the command line and #SBATCH/#TESSERA directives, and the rules that turn one parsed
// option into a field. Precedence (directives < SBATCH_* environment < command line) is done by
// parsing each source into its own BatchOptions and merging them with MergeBatchOptions.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/lib/arg_parser.h"
#include "common/status.h"

namespace tessera::cli {

struct GpuRequest {
  std::string model;  // "" = any
  uint32_t count = 0;
};

struct BatchOptions {
  std::optional<std::string> job_name, partition, output, error, chdir, export_spec, account,
      qos, constraint, nodelist, exclude, comment, dependency, wrap;
  std::optional<uint32_t> nodes_min, nodes_max, ntasks, ntasks_per_node, cpus_per_task;
  std::optional<uint64_t> mem_mib, mem_per_cpu_mib;  // setting one clears the other
  std::optional<int64_t> time_limit_s, begin_time;
  std::optional<GpuRequest> gpus_per_node;  // --gpus-per-node and --gres=gpu (later wins)
  std::optional<GpuRequest> gpus_total;     // -G/--gpus
  std::optional<bool> exclusive, hold, requeue;
  std::optional<int32_t> nice;
  bool parsable = false, test_only = false, help = false, usage = false, version = false,
       quiet = false;
  std::vector<std::string> warnings;  // accepted-but-ignored options, one line each
};

// Option ids; the table is BatchOptionSpecs().
enum BatchOpt : int {
  kOptJobName = 1, kOptPartition, kOptNodes, kOptNtasks, kOptNtasksPerNode, kOptCpusPerTask,
  kOptMem, kOptMemPerCpu, kOptTime, kOptOutput, kOptError, kOptChdir, kOptExport, kOptAccount,
  kOptQos, kOptGres, kOptGpus, kOptGpusPerNode, kOptConstraint, kOptNodelist, kOptExclude,
  kOptExclusive, kOptHold, kOptRequeue, kOptNoRequeue, kOptComment, kOptNice, kOptBegin,
  kOptWrap, kOptParsable, kOptTestOnly, kOptDependency, kOptMailType, kOptMailUser, kOptHelp,
  kOptUsage, kOptVersion, kOptQuiet, kOptVerbose,
};

const std::vector<OptionSpec>& BatchOptionSpecs();

// Where an option came from; some options are only valid on the command line.
enum class OptionSource { kCommandLine, kEnvironment, kDirective };

// Applies one parsed option. Errors name the option and the value:
//   invalid --time value "60:"  /  --wrap is only valid on the command line.
// `now` resolves --begin.
Status ApplyBatchOption(const ParsedOption& opt, OptionSource source, int64_t now,
                        BatchOptions& out);

// SBATCH_* environment variables -> options. Unknown SBATCH_* variables are ignored (as sbatch).
// Errors are prefixed "environment variable SBATCH_X: ".
Result<BatchOptions> BatchOptionsFromEnv(const std::map<std::string, std::string>& env,
                                         int64_t now);

// Fields set in `over` replace those in `base`; the two memory options travel together (a
// higher-precedence --mem clears a lower-precedence --mem-per-cpu and vice versa).
void MergeBatchOptions(const BatchOptions& over, BatchOptions& base);

// Value parsers, exposed for tests.
Result<GpuRequest> ParseGpuCount(const std::string& value);          // "[type:]N"
Result<std::optional<GpuRequest>> ParseGres(const std::string& value);  // "gpu[:type][:N]", "none"

}  // namespace tessera::cli
