// tbatch: submit a batch script (sbatch).
#include <algorithm>
#include <iterator>
#include <set>
#include <sstream>

#include "cli/lib/batch_request.h"
#include "cli/lib/batch_script.h"
#include "cli/lib/command.h"
#include "cli/lib/help_text.h"
#include "cli/lib/slurm_compat.h"
#include "common/duration.h"
#include "common/env_block.h"
#include "cli/lib/batch_env.h"
#include "common/input_limits.h"
#include "common/job_state.h"

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
      --time-min=TIME         the limit may be cut down to TIME to start earlier
  -b, --begin=TIME            start no earlier than TIME (now+60, now+1hour, 16:00,
                              2026-01-31T08:00, tomorrow, ...)
      --deadline=TIME         cancel the job if it cannot end by TIME (same syntax)
  -a, --array=INDICES         job array: 0-15, 1,3,5-7, 0-20:2, with %N = at most N at once
  -d, --dependency=EXPR       Slurm dependency expression (afterok:12, ...)
  -H, --hold                  submit held; start it later with `tcontrol release`
      --nice[=ADJ]            lower the priority by ADJ (default 100)
      --priority=N            set the priority (administrators)
      --reservation=NAME      run in this reservation
      --comment=TEXT          free-form comment
      --requeue               requeue the job after a node failure (the default)
      --no-requeue            never requeue the job
  -k, --no-kill               keep the job running if one of its nodes fails
      --signal=[{R|B}:]SIG[@SECS]
                              send SIG SECS (default 60) before the time limit; B: only to the
                              batch shell
      --uid=USER              submit as USER (root only)
Resources:
  -N, --nodes=N[-M]           number of nodes (minimum and optional maximum)
  -n, --ntasks=N              number of tasks (default: nodes x ntasks-per-node, or 1 per node)
      --ntasks-per-node=N     tasks on each node (also --tasks-per-node)
      --ntasks-per-gpu=N      tasks per GPU (with --gpus-per-node or --gpus)
  -c, --cpus-per-task=N       cores per task (default 1)
      --cpus-per-gpu=N        cores per allocated GPU
      --mem=SIZE              memory per node (4096, 500M, 16G, 1T; plain numbers are MiB;
                              0 = all of each node's memory)
      --mem-per-cpu=SIZE      memory per allocated core
      --mem-per-gpu=SIZE      memory per allocated GPU (--mem, --mem-per-cpu and --mem-per-gpu
                              exclude each other; the one from the higher source wins)
      --gres=gpu[:TYPE][:N]   GPUs per node; also mps[:TYPE]:PERCENT (a share of one GPU's
                              MPS server) or shard[:TYPE]:N (time-sliced replicas of one GPU)
      --gpus-per-node=[TYPE:]N  GPUs per node
      --gpus-per-task=[TYPE:]N  GPUs per task
      --gpu-bind=TYPE         the GPU binding of the job's trun steps (SLURM_GPU_BIND; see
                              trun --help)
  -G, --gpus=[TYPE:]N         GPUs for the whole job, divided evenly among the tasks
  -C, --constraint=EXPR       required node features
  -w, --nodelist=HOSTLIST     run on these nodes
  -x, --exclude=HOSTLIST      never run on these nodes
      --exclusive             do not share nodes with other jobs
      --switches=N[@TIME]     at most N leaf switches (wait at most TIME for them, then
                              take what is free) with TopologyPlugin=topology/tree
      --segment=N             place the nodes in segments of N, each inside one block
                              (TopologyPlugin=topology/block)
Files and environment:
  -D, --chdir=DIR             working directory of the job (default: the current directory);
                              also --workdir
  -o, --output=PATTERN        standard output file (default slurm-%j.out; %j %x %u %A %a %N)
  -e, --error=PATTERN         standard error file (default: same as --output)
  -i, --input=PATTERN         standard input file (default /dev/null)
      --open-mode=append|truncate  how the output files are opened (default truncate)
      --export=ALL|NONE|[ALL,]VAR[=VALUE],...
                              environment exported to the job (default ALL)
      --export-file=FILE      more VAR=VALUE lines (newline or NUL separated) to export
      --wrap=COMMAND          run COMMAND with /bin/sh instead of a script (command line only)
Tessera-only options (#TESSERA lines or the command line; never #SBATCH):
      --gpu-mem=SIZE          each GPU unit needs SIZE of memory: the smallest fitting MIG
                              instance or whole GPU (with a GPU count)
      --task-group=NAME:COUNT[:KEY=VALUE,...]
                              one task group (repeat for more); keys: cpus, mem (per task),
                              gpus, gpu-model, tasks-per-node. Replaces the flat per-task
                              options (-n, -c, --ntasks-per-node, --gpus-per-task, -G, ...)
Submission:
      --parsable              print only the job id ("jobid", as sbatch on one cluster)
      --test-only             validate the request with the controller and print when and where
                              the job would start; submit nothing
  -W, --wait                  wait for the job to end; exit with its exit code
  -Q, --quiet                 print no warnings and no job id
  -v, --verbose               accepted for compatibility
      --wait-all-nodes=0|1    accepted (a job always starts on nodes that are up)
Accepted and ignored (one warning each): --mail-type, --mail-user, --get-user-env, --wckey,
  -L/--licenses, --hint, --ntasks-per-core, --ntasks-per-socket, --sockets-per-node,
  --cores-per-socket, --threads-per-core, -B/--extra-node-info, --tmp, --kill-on-invalid-dep,
  -m/--distribution, --mcs-label, --profile, --acctg-freq, --propagate, --gpu-freq,
  --cpu-freq, --mem-bind, --spread-job, --use-min-nodes, -s/--oversubscribe, -O/--overcommit,
  -S/--core-spec, --thread-spec, --network, --reboot, -M/--cluster, --clusters, --bb, --bbf,
  --power, --delay-boot, --container, --ignore-pbs, --gid, -K/--kill-command, -F/--nodefile,
  --mincpus, --gres-flags.
Environment: SBATCH_ACCOUNT, SBATCH_ARRAY_INX, SBATCH_CONSTRAINT, SBATCH_CPUS_PER_GPU,
  SBATCH_EXCLUSIVE, SBATCH_EXPORT, SBATCH_GPU_BIND, SBATCH_GPUS, SBATCH_GPUS_PER_NODE,
  SBATCH_GPUS_PER_TASK,
  SBATCH_GRES, SBATCH_JOB_NAME, SBATCH_MEM_PER_CPU, SBATCH_MEM_PER_GPU, SBATCH_MEM_PER_NODE,
  SBATCH_NO_REQUEUE, SBATCH_OPEN_MODE, SBATCH_PARTITION, SBATCH_QOS, SBATCH_REQUEUE,
  SBATCH_RESERVATION, SBATCH_SIGNAL, SBATCH_TIMELIMIT;
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

// --export-file: VAR=VALUE entries separated by newlines or NULs.
Status AddExportFile(CommandContext& ctx, const std::string& path, pb::JobSpec& spec) {
  auto text = ctx.read_file(AbsolutePath(path, ctx.cwd));
  if (!text.ok()) return InvalidArgument("--export-file: " + text.status().message());
  std::string entry;
  int n = 0;
  for (size_t i = 0; i <= text->size(); ++i) {
    char c = i < text->size() ? (*text)[i] : '\n';
    if (c != '\n' && c != '\0') {
      entry += c;
      continue;
    }
    ++n;
    if (entry.empty()) continue;
    size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0)
      return InvalidArgument("--export-file " + path + " entry " + std::to_string(n) +
                             ": expected VAR=VALUE");
    EnvBlockSet(spec.mutable_env_block(), entry.substr(0, eq), entry.substr(eq + 1));
    entry.clear();
  }
  return Status::Ok();
}

// --uid=USER|UID (root only).
Status ApplyUid(CommandContext& ctx, const std::string& who, pb::JobSpec& spec) {
  if (ctx.uid != 0) return PermissionDenied("--uid is only permitted for root");
  auto uid = ctx.names->UserId(who);
  if (!uid) {
    auto n = ParseUint(who, "uid");
    if (!n.ok() || *n > 0xFFFFFFFEull) return InvalidArgument("--uid: invalid user \"" + who + "\"");
    uid = static_cast<uint32_t>(*n);
  }
  spec.set_uid(*uid);
  return Status::Ok();
}

void PrintTestOnly(CommandContext& ctx, const pb::SubmitJobRequest& req,
                   const pb::SubmitJobResponse& resp) {
  const auto& spec = req.spec();
  uint32_t cpus = resp.expected_cpus();
  if (cpus == 0)
    for (const auto& g : spec.task_groups()) cpus += g.count() * g.per_task().cpus();
  std::string part = !resp.expected_partition().empty() ? resp.expected_partition()
                     : spec.partition().empty()         ? "(default)"
                                                        : spec.partition();
  std::string when = resp.expected_start_time() ? FormatTimestamp(resp.expected_start_time())
                                                : "an unknown time";
  *ctx.err << ctx.prog << ": Job " << resp.job_id() << " to start at " << when << " using " << cpus
           << " processors on nodes "
           << (resp.expected_nodes().empty() ? "(not known yet)" : resp.expected_nodes())
           << " in partition " << part << "\n";
}

// sbatch --wait: poll until the job has ended, then exit with its exit code.
int WaitForJob(CommandContext& ctx, ControllerApi& api, uint64_t id) {
  int64_t interval = 2;
  for (;;) {
    pb::GetJobRequest g;
    g.set_job_id(id);
    auto job = api.GetJob(g);
    if (!job.ok()) return Fail(ctx, "--wait: job " + std::to_string(id) + ": " + job.status().message());
    if (IsFinished(static_cast<JobState>(job->state()))) {
      int code = job->exit_signal() ? 128 + job->exit_signal() : job->exit_code();
      if (code == 0 && job->state() != pb::COMPLETED) code = 1;
      return code;
    }
    if (!ctx.sleep(interval)) return Fail(ctx, "--wait: interrupted");
    interval = std::min<int64_t>(interval * 2, 32);  // sbatch backs off up to 32 s
  }
}

int Submit(CommandContext& ctx, const BatchOptions& opts, pb::SubmitJobRequest req) {
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  auto resp = (*api)->SubmitJob(req);
  if (!resp.ok()) return Fail(ctx, "Batch job submission failed: " + resp.status().message());
  if (!opts.quiet)
    for (const auto& w : resp->warnings()) Warn(ctx, w);
  if (opts.test_only) {
    PrintTestOnly(ctx, req, *resp);
    return 0;
  }
  if (opts.quiet) {
    // sbatch -Q: no informational output, not even the job id
  } else if (opts.parsable) {
    *ctx.out << resp->job_id() << "\n";
  } else {
    *ctx.out << "Submitted batch job " << resp->job_id() << "\n";
  }
  ctx.out->flush();
  if (opts.wait) return WaitForJob(ctx, **api, resp->job_id());
  return 0;
}

// sbatch's option errors (issue 19): exit 255 (slurm_process_option_or_exit's exit(-1)); an
// unknown or malformed option is getopt's message and "Try "sbatch --help" for more
// information", a bad value sbatch's "error:" line.
int SbatchOptionError(CommandContext& ctx, const std::string& msg) {
  bool getopt = msg.rfind("unrecognized option", 0) == 0 || msg.rfind("invalid option", 0) == 0 ||
                msg.rfind("option ", 0) == 0;
  if (getopt) {
    *ctx.err << ctx.prog << ": " << msg << "\n";
    *ctx.err << "Try \"" << ctx.prog << " --help\" for more information\n";
  } else {
    Fail(ctx, msg);
  }
  return 255;
}

}  // namespace

int RunTbatch(CommandContext& ctx) {
  auto cl = ParseBatchCommandLine(ctx.args, ctx.now);
  if (!cl.ok() && IsSlurmName(ctx.prog)) return SbatchOptionError(ctx, cl.status().message());
  if (!cl.ok()) return Fail(ctx, cl.status().message() + " (see tbatch --help)");
  if (cl->options.help) return (*ctx.out << HelpText(ctx, kUsage), 0);
  if (cl->options.usage) {
    *ctx.out << "Usage: tbatch [-N nodes] [-n ntasks] [-c cpus] [-t time] [-p partition] "
                "[-J name] [--mem size] [--gpus-per-node n] [--wrap cmd | script [args...]]\n";
    return 0;
  }
  if (cl->options.version) return (*ctx.out << VersionLine() << "\n", 0);
  auto script = LoadScript(ctx, *cl);
  if (!script.ok()) return Fail(ctx, script.status().message());
  auto opts = ResolveBatchOptions(cl->options, script->text, ctx.env, ctx.now);
  if (!opts.ok() && IsSlurmName(ctx.prog)) return SbatchOptionError(ctx, opts.status().message());
  if (!opts.ok()) return Fail(ctx, opts.status().message());
  if (!opts->quiet) {
    std::set<std::string> seen;
    for (const auto& w : opts->warnings)
      if (seen.insert(w).second) Warn(ctx, w);
  }
  auto spec = BuildJobSpec(*opts, *script, ctx.env, ctx.cwd);
  if (!spec.ok()) return Fail(ctx, spec.status().message());
  SetBatchOptionEnv(*opts, &*spec);  // SLURM_CPUS_PER_TASK, ... (issue 19)
  if (opts->export_file) {
    Status st = AddExportFile(ctx, *opts->export_file, *spec);
    if (!st.ok()) return Fail(ctx, st.message());
  }
  {  // exec's limits, early (the controller checks them again)
    std::vector<std::string_view> argv(spec->argv().begin(), spec->argv().end());
    Status st = CheckExecLimits(spec->env_block(), argv);
    if (!st.ok()) return Fail(ctx, st.message());
  }
  if (opts->uid) {
    Status st = ApplyUid(ctx, *opts->uid, *spec);
    if (!st.ok()) return Fail(ctx, st.message());
  }
  pb::SubmitJobRequest req;
  *req.mutable_spec() = std::move(*spec);
  req.set_test_only(opts->test_only);
  return Submit(ctx, *opts, std::move(req));
}

}  // namespace tessera::cli
