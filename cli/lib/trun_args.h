#pragma once
// trun's (srun's) command line: the option table, --help's text, and the parse into TrunArgs
// (srun's input environment variables first, the command line over them; outside a job the
// allocation's options too). RunTrunWith (trun.h) runs what it gives.
#include <optional>
#include <string>
#include <vector>

#include "cli/lib/batch_options.h"
#include "cli/lib/command.h"
#include "cli/lib/trun_io.h"
#include "tessera/v1/controller.pb.h"

namespace tessera::cli {

struct TrunArgs {
  v1::CreateStepRequest req;
  uint64_t job_id = 0;
  bool label = false, kill_on_bad_exit = false, help = false, version = false;
  std::vector<std::string> argv;
  // issue 19
  IoSpec output, error, input;
  bool error_given = false, append = false, allocate = false;
  std::optional<std::string> export_spec, chdir;
  std::string nodelist, exclude;  // -w/-x (trun_nodes.h)
  int64_t wait_s = 0;           // --wait: 0 = wait for every task
  BatchOptions job;             // the allocation's options (trun outside a job)
  bool pty = false;             // --pty (trun_pty.h)
  bool pmi2 = false;            // --mpi=pmi2 (noded/pmi2.h; fences gathered by StepRun)
  std::string gpu_bind;         // --gpu-bind / SLURM_GPU_BIND as given (common/gpu_bind.h)
};

// The options of ctx.args (and of srun's input variables in ctx.env); InvalidArgument naming
// the option (or "from the environment: ...") when one is wrong.
Result<TrunArgs> ParseTrunArgs(CommandContext& ctx);

// trun --help: the usage text and the options listed from the table.
std::string TrunHelp();

}  // namespace tessera::cli
