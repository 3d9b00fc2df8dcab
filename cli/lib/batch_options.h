#pragma once
// tbatch's options (sbatch's spellings) as one struct of "set or not" fields, the option table
// shared by the command line and #SBATCH/#TESSERA directives, and the rules that turn one parsed
// option into a field. Precedence (directives < SBATCH_* environment < command line) is done by
// parsing each source into its own BatchOptions and merging them with MergeBatchOptions.
//
// Options that Tessera accepts but does not act on (kIgnoredOptions: --mail-type, --hint, ...)
// each add one warning line naming the option; tbatch prints each distinct line once.
// Tessera-only options (--gpu-mem, --task-group) are accepted only in #TESSERA directives and on
// the command line, never in #SBATCH lines (Slurm would reject them there).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli/lib/arg_parser.h"
#include "cli/lib/batch_values.h"
#include "common/status.h"

namespace tessera::cli {

struct GpuRequest {
  std::string model;  // "" = any
  uint32_t count = 0;
};

// GPU sharing GRES of --gres (issue 14 §3): mps:N (percent of one GPU's MPS) and shard:N.
struct GresShares {
  uint32_t mps = 0;
  uint32_t shards = 0;
  std::string model;  // mps:a100:50 / shard:a100:2: only GPUs of this type share ("" = any)
};

struct BatchOptions {
  std::optional<std::string> job_name, partition, output, error, input, chdir, export_spec,
      export_file, account, qos, constraint, nodelist, exclude, comment, dependency, wrap, array,
      reservation, open_mode, uid,
      gpu_bind;  // --gpu-bind (issue 19, h19 s7): SLURM_GPU_BIND for the job's steps
  std::optional<uint32_t> nodes_min, nodes_max, ntasks, ntasks_per_node, cpus_per_task,
      cpus_per_gpu, ntasks_per_gpu, priority, segment;  // segment: --segment=N (issue 15)
  std::optional<uint64_t> mem_mib, mem_per_cpu_mib, mem_per_gpu_mib;  // one excludes the others
  std::optional<bool> mem_whole_node;                                 // --mem=0
  std::optional<int64_t> time_limit_s, time_min_s, begin_time, deadline;
  std::optional<GpuRequest> gpus_per_node;  // --gpus-per-node and --gres=gpu (later wins)
  std::optional<GpuRequest> gpus_total;     // -G/--gpus
  std::optional<GpuRequest> gpus_per_task;  // --gpus-per-task
  std::optional<GresShares> gres_shares;    // --gres=mps:N / shard:N (set by every --gres)
  std::optional<SignalSpec> signal;
  std::optional<SwitchesSpec> switches;
  std::optional<uint64_t> gpu_min_mem_mib;  // #TESSERA --gpu-mem
  std::vector<TaskGroupSpec> task_groups;   // #TESSERA --task-group (accumulate)
  std::optional<bool> exclusive, hold, requeue, no_kill;
  std::optional<int32_t> nice;
  bool parsable = false, test_only = false, wait = false, help = false, usage = false,
       version = false, quiet = false;
  std::vector<std::string> warnings;  // accepted-but-ignored options, one line each
};

// Option ids; the table is BatchOptionSpecs().
enum BatchOpt : int {
  kOptJobName = 1, kOptPartition, kOptNodes, kOptNtasks, kOptNtasksPerNode, kOptCpusPerTask,
  kOptMem, kOptMemPerCpu, kOptTime, kOptOutput, kOptError, kOptChdir, kOptExport, kOptAccount,
  kOptQos, kOptGres, kOptGpus, kOptGpusPerNode, kOptConstraint, kOptNodelist, kOptExclude,
  kOptExclusive, kOptHold, kOptRequeue, kOptNoRequeue, kOptComment, kOptNice, kOptBegin,
  kOptWrap, kOptParsable, kOptTestOnly, kOptDependency, kOptHelp, kOptUsage, kOptVersion,
  kOptQuiet, kOptVerbose, kOptInput, kOptExportFile, kOptArray, kOptReservation, kOptOpenMode,
  kOptUid, kOptCpusPerGpu, kOptNtasksPerGpu, kOptPriority, kOptMemPerGpu, kOptTimeMin,
  kOptDeadline, kOptGpusPerTask, kOptSignal, kOptSwitches, kOptGpuMem, kOptTaskGroup, kOptWait,
  kOptNoKill, kOptSegment, kOptGpuBind,
  kOptIgnored = 100,  // accepted, not acted on: warning
};

const std::vector<OptionSpec>& BatchOptionSpecs();
// The accepted-but-ignored options: {long name, short name or 0, argument kind}.
const std::vector<std::tuple<std::string, char, ArgKind>>& IgnoredOptions();

// Where an option came from; some options are only valid on the command line.
enum class OptionSource { kCommandLine, kEnvironment, kDirective, kTesseraDirective };

// Applies one parsed option. Errors name the option and the value:
//   invalid --time value "60:"  /  --wrap is only valid on the command line.
// `now` resolves --begin and --deadline.
Status ApplyBatchOption(const ParsedOption& opt, OptionSource source, int64_t now,
                        BatchOptions& out);

// SBATCH_* environment variables -> options. Unknown SBATCH_* variables are ignored (as sbatch).
// Errors are prefixed "environment variable SBATCH_X: ".
Result<BatchOptions> BatchOptionsFromEnv(const std::map<std::string, std::string>& env,
                                         int64_t now);

// Fields set in `over` replace those in `base`; the memory options travel together (a
// higher-precedence --mem clears a lower-precedence --mem-per-cpu and vice versa).
void MergeBatchOptions(const BatchOptions& over, BatchOptions& base);

// Value parsers, exposed for tests.
Result<GpuRequest> ParseGpuCount(const std::string& value);          // "[type:]N"
// "gpu[:type][:N]", "none"; mps:N and shard:N items are left to ParseGresShares (nullopt
// when they are the only items).
Result<std::optional<GpuRequest>> ParseGres(const std::string& value);
// The mps:N / shard:N items of a --gres value (Slurm spelling; "gres:" / "gres/" prefixes too).
Result<GresShares> ParseGresShares(const std::string& value);

}  // namespace tessera::cli
