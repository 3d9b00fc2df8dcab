// tbatch: submit a batch script (sbatch).
#include <iterator>
#include <sstream>

#include "cli/lib/batch_request.h"
#include "cli/lib/batch_script.h"
#include "cli/lib/command.h"

namespace tessera::cli {
namespace {

constexpr char kUsage[] = R"(Usage: tbatch [OPTIONS] [script [args...]]
Submit a batch script to Tessera. The script is read from the file named, or from standard
input when none is given; --wrap builds one from a command line. Options may also be given in
the script as "#SBATCH" or "#TESSERA" lines before its first command; precedence is
directives < SBATCH_* environment variables < command line.

Job description:
  -J, --job-name=NAME         name of the job (default: the script's file name)
  -p, --partition=PARTITION   partition to run in (default: the default partition)
  -A, --account=ACCOUNT       account (queue) to charge
  -q, --qos=QOS               quality of service
  -t, --time=TIME             time limit: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED
  -b, --begin=TIME            start no earlier than TIME (now+60, now+1hour, 16:00,
                              2026-01-31T08:00, tomorrow, ...)
  -d, --dependency=EXPR       Slurm dependency expression (afterok:12, ...)
  -H, --hold                  submit held; start it later with `tcontrol release`
      --nice[=ADJ]            lower the priority by ADJ (default 100)
      --comment=TEXT          free-form comment
      --requeue               requeue the job after a node failure (the default)
      --no-requeue            never requeue the job
Resources:
  -N, --nodes=N[-M]           number of nodes (minimum and optional maximum)
  -n, --ntasks=N              number of tasks (default: nodes x ntasks-per-node, or 1 per node)
      --ntasks-per-node=N     tasks on each node
  -c, --cpus-per-task=N       cores per task (default 1)
      --mem=SIZE              memory per node (4096, 500M, 16G, 1T; plain numbers are MiB)
      --mem-per-cpu=SIZE      memory per allocated core (overrides --mem from a lower source)
      --gres=gpu[:TYPE][:N]   GPUs per node (only gpu GRES are supported)
      --gpus-per-node=[TYPE:]N  GPUs per node
  -G, --gpus=[TYPE:]N         GPUs for the whole job, divided evenly among the tasks
  -C, --constraint=EXPR       required node features
  -w, --nodelist=HOSTLIST     run on these nodes
  -x, --exclude=HOSTLIST      never run on these nodes
      --exclusive             do not share nodes with other jobs
Files and environment:
  -D, --chdir=DIR             working directory of the job (default: the current directory)
  -o, --output=PATTERN        standard output file (default slurm-%j.out; %j %x %u %A %a %N)
  -e, --error=PATTERN         standard error file (default: same as --output)
      --export=ALL|NONE|[ALL,]VAR[=VALUE],...
                              environment exported to the job (default ALL)
      --wrap=COMMAND          run COMMAND with /bin/sh instead of a script (command line only)
Submission:
      --parsable              print only the job id
      --test-only             validate the request with the controller; submit nothing
  -Q, --quiet                 print no warnings
  -v, --verbose               accepted for compatibility
Accepted and ignored (one warning each): --mail-type, --mail-user.
Environment: SBATCH_ACCOUNT, SBATCH_CONSTRAINT, SBATCH_EXCLUSIVE, SBATCH_EXPORT, SBATCH_GPUS,
  SBATCH_GPUS_PER_NODE, SBATCH_GRES, SBATCH_JOB_NAME, SBATCH_MEM_PER_CPU, SBATCH_MEM_PER_NODE,
  SBATCH_NO_REQUEUE, SBATCH_PARTITION, SBATCH_QOS, SBATCH_REQUEUE, SBATCH_TIMELIMIT;
  TESSERA_CONF names the configuration file (default /etc/tessera/tessera.conf).
Help:
  -h, --help                  show this help
      --usage                 show a one-line usage summary
  -V, --version               show the version
)";

// The script text and where it came from; nothing is read for --wrap.
Result<ScriptSource> LoadScript(CommandContext& ctx, const BatchCommandLine& cl) {
  ScriptSource src;
  if (cl.options.wrap) {
    if (!cl.positionals.empty())
      return InvalidArgument("script argument not permitted with --wrap option");
    src.text = WrapScript(*cl.options.wrap);
    return src;
  }
  if (!cl.positionals.empty()) {
    src.path = cl.positionals[0];
    src.args.assign(cl.positionals.begin() + 1, cl.positionals.end());
    auto text = ctx.read_file(src.path);
    if (!text.ok()) return text.status();
    src.text = std::move(*text);
  } else {
    src.text.assign(std::istreambuf_iterator<char>(*ctx.in), std::istreambuf_iterator<char>());
  }
  TESSERA_RETURN_IF_ERROR(CheckBatchScript(src.text));
  return src;
}

int Submit(CommandContext& ctx, const BatchOptions& opts, pb::SubmitJobRequest req) {
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  auto resp = (*api)->SubmitJob(req);
  if (!resp.ok()) return Fail(ctx, "Batch job submission failed: " + resp.status().message());
  if (!opts.quiet)
    for (const auto& w : resp->warnings()) Warn(ctx, w);
  if (opts.test_only) {
    const auto& spec = req.spec();
    uint32_t cpus = 0;
    for (const auto& g : spec.task_groups()) cpus += g.count() * g.per_task().cpus();
    *ctx.err << ctx.prog << ": Job would be accepted: " << cpus << " processors in partition "
             << (spec.partition().empty() ? "(default)" : spec.partition())
             << " (--test-only: nothing submitted)\n";
    return 0;
  }
  if (opts.parsable) {
    *ctx.out << resp->job_id() << "\n";
  } else {
    *ctx.out << "Submitted batch job " << resp->job_id() << "\n";
  }
  return 0;
}

}  // namespace

int RunTbatch(CommandContext& ctx) {
  auto cl = ParseBatchCommandLine(ctx.args, ctx.now);
  if (!cl.ok()) return Fail(ctx, cl.status().message() + " (see tbatch --help)");
  if (cl->options.help) return (*ctx.out << kUsage, 0);
  if (cl->options.usage) {
    *ctx.out << "Usage: tbatch [-N nodes] [-n ntasks] [-c cpus] [-t time] [-p partition] "
                "[-J name] [--mem size] [--gpus-per-node n] [--wrap cmd | script [args...]]\n";
    return 0;
  }
  if (cl->options.version) return (*ctx.out << VersionLine() << "\n", 0);
  auto script = LoadScript(ctx, *cl);
  if (!script.ok()) return Fail(ctx, script.status().message());
  auto opts = ResolveBatchOptions(cl->options, script->text, ctx.env, ctx.now);
  if (!opts.ok()) return Fail(ctx, opts.status().message());
  if (!opts->quiet)
    for (const auto& w : opts->warnings) Warn(ctx, w);
  auto spec = BuildJobSpec(*opts, *script, ctx.env, ctx.cwd);
  if (!spec.ok()) return Fail(ctx, spec.status().message());
  pb::SubmitJobRequest req;
  *req.mutable_spec() = std::move(*spec);
  req.set_test_only(opts->test_only);
  return Submit(ctx, *opts, std::move(req));
}

}  // namespace tessera::cli
