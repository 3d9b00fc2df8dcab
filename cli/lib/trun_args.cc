// trun's command line. See trun_args.h.
#include "cli/lib/trun_args.h"

#include <algorithm>
#include <map>
#include <set>

#include "cli/lib/arg_parser.h"
#include "cli/lib/batch_request.h"
#include "common/gpu_bind.h"

namespace tessera::cli {
namespace {

namespace v1 = tessera::v1;

constexpr char kUsage[] = R"(Usage: trun [OPTIONS] command [args...]
Run a parallel step inside a job allocation (srun). Each task runs the command with
SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURM_NTASKS, SLURM_STEP_* (and TESSERA_* twins,
RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) set.

  -n, --ntasks=N              number of tasks (default: the job's)
      --ntasks-per-node=N     tasks on each node
  -N, --nodes=N               number of the job's nodes to use (default: all needed)
  -c, --cpus-per-task=N       CPUs per task (default 1)
      --gres=gpu[:TYPE][:N]   N of the job's GPUs on each node of the step (default N=1)
      --gpus-per-node=[TYPE:]N  the same
  -G, --gpus=[TYPE:]N         N of the job's GPUs in all, spread over the step's nodes
      --gpus-per-task=[TYPE:]N  N of the job's GPUs per task, each task bound to its own N
                              (--gpu-bind=per_task:N; default from SLURM_GPUS_PER_TASK, set by
                              tbatch --gpus-per-task)
                              (a step asking GPUs gets its own: CUDA_VISIBLE_DEVICES lists only
                              them; while other steps hold the job's GPUs it waits, as srun)
      --gpu-bind=[verbose,]TYPE  which of the step's GPUs on its node each task sees (its
                              CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS): none (all), per_task:N,
                              map_gpu:I[*R],... or mask_gpu:HEX[*R],... by local task id (I and
                              bit k = the step's k-th GPU there), single:N (N tasks per GPU),
                              closest (= none: tasks are not bound to CPUs). Not with 1 task on
                              a node. Device access stays the job's (no per-task device cgroup)
  -w, --nodelist=HOSTLIST     run on these of the job's nodes (more with a larger -N)
  -x, --exclude=HOSTLIST      never on these
  -o, --output=MODE           all (or -), none, a task id, or a filename pattern (%j %J %s %t
                              %n %N %u %x %A %a %b %%, %3t zero-padded; a number that is no
                              task of the step is a file name); stderr follows unless -e
  -e, --error=MODE            the same for stderr
  -i, --input=MODE            all (default): trun's stdin goes to every task; a task id: to
                              that task only (the others read /dev/null); none: /dev/null; a
                              file name: trun reads it for every task; a pattern with %t %n %N
                              or %u: each task reads its own file on its node
      --open-mode=append|truncate  for -o/-e files (default truncate)
      --export=ALL|NONE|[ALL,]VAR[=VALUE],...  the tasks' environment (default ALL)
  -W, --wait=SECONDS          end the step SECONDS after the first task ended
  -D, --chdir=DIR             the tasks' working directory
      --mem=SIZE, --mem-per-cpu=SIZE, --mem-per-gpu=SIZE, --cpus-per-gpu=N, --exclusive
                              accepted; a step uses the job's cgroup (no per-step memory
                              limit). Outside a job they apply to the new allocation.
  -p, --partition, -t, --time, -A, --account, -q, --qos, -C, --constraint, --reservation,
  -d, --dependency           outside a job: options of the allocation trun creates
      --mpi=pmi2|none         pmi2: each task gets a PMI-2 server on its node (PMI_FD,
                              PMI_RANK, PMI_SIZE; fences across the step's nodes through trun);
                              pmix is not provided (mpirun inside the allocation works: Open
                              MPI starts its daemons by trun)
      --pty                   run task 0 on a terminal on its node: trun's stdin goes to it
                              (raw mode when a terminal, window size kept), its output comes
                              back; the other tasks' output is discarded
  -l, --label                 prefix each output line with the task's rank ("0: ...")
  -K, --kill-on-bad-exit[=0|1]  kill the step when a task exits non-zero
  -J, --job-name=NAME         name of the step (default: the command's name)
      --jobid=ID              run inside job ID (default: $SLURM_JOB_ID)
  -u, --unbuffered            accepted (output is always passed through unbuffered)
  -v, --verbose               accepted for compatibility
  -h, --help                  show this help
  -V, --version               show the version
Outside a job (no SLURM_JOB_ID, no --jobid) trun first creates an allocation from the job
options (-N, -n, -c, --mem, -t, -p, ...), runs the step in it and releases it, as srun does.
Refused with a message: --het-group, --container*, --mpi=pmix.
Ctrl-C forwards SIGINT to the tasks; a second Ctrl-C within 1 second cancels the step.
SIGTERM, SIGUSR1 and SIGUSR2 are forwarded too. Exit status: the worst task's (128+signal for a
task killed by a signal). Environment: TESSERA_CONF names the configuration file.
)";

enum Opt { kNtasks = 1, kPerNode, kNodes, kCpus, kLabel, kKill, kName, kJobid, kUnbuf, kVerbose,
           kHelp, kVersion, kIgnoredArg, kGres, kGpusPerNode, kGpus, kGpusPerTask,
           // issue 19
           kNodelist, kExclude, kOutput, kError, kInput, kOpenMode, kExport, kWait, kChdir,
           kMem, kMemPerCpu, kExclusive, kIgnoredFlag, kPty, kHetGroup, kContainer,
           kContainerFlag, kMpi, kPartition, kTime, kAccount, kQos, kConstraint, kReservation,
           kDependency, kMemPerGpu, kCpusPerGpu, kGpuBind };

const std::vector<OptionSpec> kSpecs = {
    {"ntasks", 'n', ArgKind::kRequired, kNtasks},
    {"ntasks-per-node", 0, ArgKind::kRequired, kPerNode},
    {"nodes", 'N', ArgKind::kRequired, kNodes},
    {"cpus-per-task", 'c', ArgKind::kRequired, kCpus},
    {"label", 'l', ArgKind::kNone, kLabel},
    {"kill-on-bad-exit", 'K', ArgKind::kOptional, kKill},
    {"job-name", 'J', ArgKind::kRequired, kName},
    {"jobid", 0, ArgKind::kRequired, kJobid},
    {"unbuffered", 'u', ArgKind::kNone, kUnbuf},
    {"verbose", 'v', ArgKind::kNone, kVerbose},
    {"help", 'h', ArgKind::kNone, kHelp},
    {"version", 'V', ArgKind::kNone, kVersion},
    {"mpi", 0, ArgKind::kRequired, kMpi},
    {"cpu-bind", 0, ArgKind::kRequired, kIgnoredArg},
    // issue 19
    {"nodelist", 'w', ArgKind::kRequired, kNodelist},
    {"exclude", 'x', ArgKind::kRequired, kExclude},
    {"output", 'o', ArgKind::kRequired, kOutput},
    {"error", 'e', ArgKind::kRequired, kError},
    {"input", 'i', ArgKind::kRequired, kInput},
    {"open-mode", 0, ArgKind::kRequired, kOpenMode},
    {"export", 0, ArgKind::kRequired, kExport},
    {"wait", 'W', ArgKind::kRequired, kWait},
    {"chdir", 'D', ArgKind::kRequired, kChdir},
    {"mem", 0, ArgKind::kRequired, kMem},
    {"mem-per-cpu", 0, ArgKind::kRequired, kMemPerCpu},
    {"mem-per-gpu", 0, ArgKind::kRequired, kMemPerGpu},
    {"cpus-per-gpu", 0, ArgKind::kRequired, kCpusPerGpu},
    {"exclusive", 0, ArgKind::kOptional, kExclusive},
    {"exact", 0, ArgKind::kNone, kIgnoredFlag},
    {"overlap", 0, ArgKind::kNone, kIgnoredFlag},
    {"overcommit", 'O', ArgKind::kNone, kIgnoredFlag},
    {"oversubscribe", 's', ArgKind::kNone, kIgnoredFlag},
    {"disable-status", 'X', ArgKind::kNone, kIgnoredFlag},
    {"quiet", 'Q', ArgKind::kNone, kIgnoredFlag},
    {"no-kill", 'k', ArgKind::kOptional, kIgnoredArg},
    {"accel-bind", 0, ArgKind::kRequired, kIgnoredArg},
    {"mem-bind", 0, ArgKind::kRequired, kIgnoredArg},
    {"gpu-bind", 0, ArgKind::kRequired, kGpuBind},
    {"distribution", 'm', ArgKind::kRequired, kIgnoredArg},
    {"hint", 0, ArgKind::kRequired, kIgnoredArg},
    {"propagate", 0, ArgKind::kOptional, kIgnoredArg},
    {"cpu-freq", 0, ArgKind::kRequired, kIgnoredArg},
    {"network", 0, ArgKind::kRequired, kIgnoredArg},
    {"ntasks-per-core", 0, ArgKind::kRequired, kIgnoredArg},
    {"threads", 'T', ArgKind::kRequired, kIgnoredArg},
    {"wckey", 0, ArgKind::kRequired, kIgnoredArg},
    {"pty", 0, ArgKind::kOptional, kPty},
    {"het-group", 0, ArgKind::kRequired, kHetGroup},
    {"container", 0, ArgKind::kRequired, kContainer},
    {"container-id", 0, ArgKind::kRequired, kContainer},
    {"container-image", 0, ArgKind::kRequired, kContainer},
    {"container-mounts", 0, ArgKind::kRequired, kContainer},
    {"container-workdir", 0, ArgKind::kRequired, kContainer},
    {"container-name", 0, ArgKind::kRequired, kContainer},
    {"container-save", 0, ArgKind::kRequired, kContainer},
    {"container-env", 0, ArgKind::kRequired, kContainer},
    {"container-entrypoint", 0, ArgKind::kNone, kContainerFlag},
    {"container-writable", 0, ArgKind::kNone, kContainerFlag},
    {"container-readonly", 0, ArgKind::kNone, kContainerFlag},
    {"container-remap-root", 0, ArgKind::kNone, kContainerFlag},
    {"no-container-remap-root", 0, ArgKind::kNone, kContainerFlag},
    {"container-mount-home", 0, ArgKind::kNone, kContainerFlag},
    {"no-container-mount-home", 0, ArgKind::kNone, kContainerFlag},
    {"partition", 'p', ArgKind::kRequired, kPartition},
    {"time", 't', ArgKind::kRequired, kTime},
    {"account", 'A', ArgKind::kRequired, kAccount},
    {"qos", 'q', ArgKind::kRequired, kQos},
    {"constraint", 'C', ArgKind::kRequired, kConstraint},
    {"reservation", 0, ArgKind::kRequired, kReservation},
    {"dependency", 'd', ArgKind::kRequired, kDependency},
    {"gres", 0, ArgKind::kRequired, kGres},
    {"gpus-per-node", 0, ArgKind::kRequired, kGpusPerNode},
    {"gpus", 'G', ArgKind::kRequired, kGpus},
    {"gpus-per-task", 0, ArgKind::kRequired, kGpusPerTask},
};

// The options --help lists straight from kSpecs (issue 21: every accepted option is in --help
// and so in the man page): those accepted and ignored, and the refused container options. A
// new entry with one of these ids is listed without touching kUsage.
std::string TableListedHelp() {
  auto list = [](std::initializer_list<int> ids) {
    std::string out, line;
    for (const auto& s : kSpecs) {
      if (std::find(ids.begin(), ids.end(), s.id) == ids.end()) continue;
      std::string one = "--" + s.long_name;
      if (s.short_name) one = std::string("-") + s.short_name + ", " + one;
      if (s.arg == ArgKind::kRequired) one += "=VALUE";
      if (s.arg == ArgKind::kOptional) one += "[=VALUE]";
      if (!line.empty() && line.size() + one.size() > 88) out += line + "\n", line.clear();
      line += (line.empty() ? "      " : ", ") + one;
    }
    return out + line + "\n";
  };
  return "Accepted and ignored (a step runs in the job's cgroup, without a binding of its own):\n" +
         list({kIgnoredFlag, kIgnoredArg}) +
         "Refused with a message (containers are not supported):\n" +
         list({kContainer, kContainerFlag});
}

// trun options that are also options of the allocation trun makes outside a job.
int JobOption(int id) {
  switch (id) {
    case kNtasks: return kOptNtasks;
    case kPerNode: return kOptNtasksPerNode;
    case kNodes: return kOptNodes;
    case kCpus: return kOptCpusPerTask;
    case kName: return kOptJobName;
    case kGres: return kOptGres;
    case kGpusPerNode: return kOptGpusPerNode;
    case kGpus: return kOptGpus;
    case kGpusPerTask: return kOptGpusPerTask;
    case kNodelist: return kOptNodelist;
    case kExclude: return kOptExclude;
    case kMem: return kOptMem;
    case kMemPerCpu: return kOptMemPerCpu;
    case kMemPerGpu: return kOptMemPerGpu;
    case kCpusPerGpu: return kOptCpusPerGpu;
    case kExclusive: return kOptExclusive;
    case kPartition: return kOptPartition;
    case kTime: return kOptTime;
    case kAccount: return kOptAccount;
    case kQos: return kOptQos;
    case kConstraint: return kOptConstraint;
    case kReservation: return kOptReservation;
    case kDependency: return kOptDependency;
    case kChdir: return kOptChdir;
    default: return 0;
  }
}

Status ApplyIssue19Option(const ParsedOption& o, TrunArgs& a);

Result<uint32_t> Count(const ParsedOption& o, bool zero_ok = false) {
  const std::string& v = *o.value;
  if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos)
    return InvalidArgument("invalid " + o.name + " value \"" + v + "\": expected a number");
  uint32_t n = static_cast<uint32_t>(std::stoul(v));
  if (n == 0 && !zero_ok) return InvalidArgument("invalid " + o.name + " value \"" + v +
                                                 "\": must be at least 1");
  return n;
}

Status ApplyGpuOption(const ParsedOption& o, TrunArgs& a);

Status ApplyOption(const ParsedOption& o, TrunArgs& a) {
  switch (o.id) {
    case kNtasks: case kPerNode: case kNodes: case kCpus: {
      auto n = Count(o);
      if (!n.ok()) return n.status();
      if (o.id == kNtasks) a.req.set_ntasks(*n);
      if (o.id == kPerNode) a.req.set_ntasks_per_node(*n);
      if (o.id == kNodes) a.req.set_nodes(*n);
      if (o.id == kCpus) a.req.set_cpus_per_task(*n);
      return Status::Ok();
    }
    case kLabel: a.label = true; return Status::Ok();
    case kKill:
      if (o.value && *o.value != "0" && *o.value != "1")
        return InvalidArgument("invalid --kill-on-bad-exit value \"" + *o.value +
                               "\": expected 0 or 1");
      a.kill_on_bad_exit = !o.value || *o.value == "1";
      return Status::Ok();
    case kName: a.req.set_name(*o.value); return Status::Ok();
    case kJobid: {
      const std::string& v = *o.value;
      if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos)
        return InvalidArgument("invalid --jobid value \"" + v + "\": expected a job id");
      a.job_id = std::stoull(v);
      return Status::Ok();
    }
    case kGres: case kGpusPerNode: case kGpus: case kGpusPerTask: return ApplyGpuOption(o, a);
    case kHelp: a.help = true; return Status::Ok();
    case kVersion: a.version = true; return Status::Ok();
    default: return ApplyIssue19Option(o, a);
  }
}

// The options of issue 19 (srun's "inside jobs" options).
Status ApplyIssue19Option(const ParsedOption& o, TrunArgs& a) {
  switch (o.id) {
    case kNodelist: a.nodelist = *o.value; return Status::Ok();
    case kExclude: a.exclude = *o.value; return Status::Ok();
    case kOutput: case kError: case kInput: {
      auto spec = ParseIoSpec(o.name, *o.value);
      if (!spec.ok()) return spec.status();
      if (o.id == kOutput) a.output = *spec;
      if (o.id == kError) a.error = *spec, a.error_given = true;
      if (o.id == kInput) a.input = *spec;
      return Status::Ok();
    }
    case kOpenMode: {
      std::string v = *o.value;
      if (v != "append" && v != "truncate" && v != "a" && v != "t")
        return InvalidArgument("invalid --open-mode value \"" + v + "\": expected append or truncate");
      a.append = v[0] == 'a';
      return Status::Ok();
    }
    case kExport: a.export_spec = *o.value; return Status::Ok();
    case kWait: {
      const std::string& v = *o.value;
      if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos)
        return InvalidArgument("invalid --wait value \"" + v + "\": expected seconds");
      a.wait_s = std::stoll(v);
      return Status::Ok();
    }
    case kChdir: a.chdir = *o.value; return Status::Ok();
    case kMpi:
      a.pmi2 = *o.value == "pmi2";
      if (a.pmi2 || *o.value == "none" || *o.value == "list") return Status::Ok();
      return InvalidArgument("--mpi=" + *o.value + ": Tessera provides PMI-2 (--mpi=pmi2) but "
                             "no PMIx server for direct launch; use --mpi=pmi2 or none, or run "
                             "mpirun inside the allocation (Open MPI starts its daemons with "
                             "trun/srun)");
    case kPty: a.pty = true; return Status::Ok();
    case kGpuBind: {  // issue 19 (h19 s7): common/gpu_bind.h
      auto b = ParseGpuBind(*o.value);
      if (!b.ok()) return b.status();
      a.gpu_bind = *o.value;
      return Status::Ok();
    }
    case kHetGroup:
      return InvalidArgument("--het-group: heterogeneous jobs are not supported by Tessera");
    case kContainer: case kContainerFlag:
      return InvalidArgument(o.name + ": steps cannot run in containers: no OCI runtime is "
                             "configured for trun steps (pyxis/enroot and Slurm's OCI "
                             "container options are not supported)");
    default: return Status::Ok();  // -u, -v, --cpu-bind, --exact, ...: accepted
  }
}

// --gres=gpu[:type][:N] (N default 1) and --gpus*=[type:]N: the step's GPUs.
Status ApplyGpuOption(const ParsedOption& o, TrunArgs& a) {
  std::vector<std::string> f;
  for (size_t pos = 0;;) {
    size_t c = o.value->find(':', pos);
    f.push_back(o.value->substr(pos, c == std::string::npos ? std::string::npos : c - pos));
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  std::string what = "invalid " + o.name + " value \"" + *o.value + "\": ";
  if (o.id == kGres) {
    if (f[0] != "gpu" && f[0] != "gres/gpu")
      return InvalidArgument(what + "a step can ask only gpu (gpu[:type][:count])");
    f.erase(f.begin());
    if (f.empty() || f.back().find_first_not_of("0123456789") != std::string::npos)
      f.push_back("1");  // gpu or gpu:type: one
  }
  if (f.empty() || f.size() > 2 || f.back().empty() || f.back().size() > 4 ||
      f.back().find_first_not_of("0123456789") != std::string::npos || std::stoul(f.back()) == 0)
    return InvalidArgument(what + "expected [type:]count with a count of at least 1");
  auto n = static_cast<uint32_t>(std::stoul(f.back()));
  if (f.size() == 2) a.req.set_gpu_type(f[0]);
  if (o.id == kGres || o.id == kGpusPerNode) a.req.set_gpus_per_node(n);
  if (o.id == kGpus) a.req.set_gpus(n);
  if (o.id == kGpusPerTask) a.req.set_gpus_per_task(n);
  int given = (a.req.gpus_per_node() > 0) + (a.req.gpus() > 0) + (a.req.gpus_per_task() > 0);
  if (given > 1)
    return InvalidArgument("give one of --gres=gpu, --gpus-per-node, --gpus and --gpus-per-task");
  return Status::Ok();
}

// srun's input environment variables (issue 19), used when the option is not given. Returned as
// options placed before the command line's, so the command line wins.
std::vector<std::string> EnvOptions(const std::map<std::string, std::string>& env, bool in_job) {
  auto get = [&](const char* k) -> const std::string* {
    auto it = env.find(k);
    return it == env.end() || it->second.empty() ? nullptr : &it->second;
  };
  std::vector<std::string> out;
  const std::pair<const char*, const char*> value_vars[] = {
      {"SRUN_CPUS_PER_TASK", "--cpus-per-task"}, {"SLURM_CPUS_PER_TASK", "--cpus-per-task"},
      {"SLURM_NTASKS_PER_NODE", "--ntasks-per-node"}, {"SLURM_WAIT", "--wait"},
      {"SLURM_OPEN_MODE", "--open-mode"}, {"SRUN_OUTPUT", "--output"},
      {"SRUN_ERROR", "--error"}, {"SRUN_INPUT", "--input"},
      {"SRUN_EXPORT_ENV", "--export"}, {"SLURM_EXPORT_ENV", "--export"},
      {"SLURM_MPI_TYPE", "--mpi"}, {"SLURM_GPU_BIND", "--gpu-bind"},
      {"SLURM_GPUS_PER_TASK", "--gpus-per-task"},  // sbatch --gpus-per-task: steps inherit it
  };
  std::set<std::string> seen;
  for (const auto& [var, opt] : value_vars) {
    const std::string* v = get(var);
    if (!v || !seen.insert(opt).second) continue;
    out.push_back(std::string(opt) + "=" + *v);
  }
  if (const std::string* v = get("SLURM_KILL_BAD_EXIT"); v && *v != "0") out.push_back("-K");
  if (get("SLURM_LABELIO")) out.push_back("-l");
  if (!in_job) {  // the allocation's options: outside a job only (srun ignores them inside)
    const std::pair<const char*, const char*> job_vars[] = {
        {"SLURM_JOB_NAME", "--job-name"}, {"SLURM_PARTITION", "--partition"},
        {"SLURM_ACCOUNT", "--account"}, {"SLURM_QOS", "--qos"},
        {"SLURM_TIMELIMIT", "--time"}, {"SLURM_CONSTRAINT", "--constraint"},
        {"SLURM_RESERVATION", "--reservation"},
    };
    for (const auto& [var, opt] : job_vars)
      if (const std::string* v = get(var)) out.push_back(std::string(opt) + "=" + *v);
  }
  return out;
}
}  // namespace

Result<TrunArgs> ParseTrunArgs(CommandContext& ctx) {
  auto parsed = ParseArgs(ctx.args, kSpecs, /*stop_at_positional=*/true);
  if (!parsed.ok()) return parsed.status();
  bool in_job = ctx.env.count("SLURM_JOB_ID") && !ctx.env.at("SLURM_JOB_ID").empty();
  for (const auto& o : parsed->options) in_job = in_job || o.id == kJobid;
  auto from_env = ParseArgs(EnvOptions(ctx.env, in_job), kSpecs, /*stop_at_positional=*/true);
  if (!from_env.ok()) return from_env.status();
  TrunArgs a;
  std::vector<ParsedOption> all;
  bool ntasks_given = false, gpus_given = false;
  auto is_gpus = [](int id) {
    return id == kGres || id == kGpusPerNode || id == kGpus || id == kGpusPerTask;
  };
  for (const auto& o : parsed->options) {
    ntasks_given = ntasks_given || o.id == kNtasks;
    gpus_given = gpus_given || is_gpus(o.id);
  }
  for (const auto& o : from_env->options) {
    if (ntasks_given && o.id == kPerNode) continue;  // srun: -n wins over SLURM_NTASKS_PER_NODE
    if (gpus_given && is_gpus(o.id)) continue;  // the step's own GPU request replaces the job's
    all.push_back(o);
  }
  size_t env_count = all.size();
  all.insert(all.end(), parsed->options.begin(), parsed->options.end());
  for (size_t i = 0; i < all.size(); ++i) {
    const auto& o = all[i];
    bool env_source = i < env_count;
    if (Status st = ApplyOption(o, a); !st.ok())
      return env_source ? InvalidArgument("from the environment: " + st.message()) : st;
    if (int job_id = JobOption(o.id)) {
      ParsedOption b = o;
      b.id = job_id;
      if (Status st = ApplyBatchOption(b, OptionSource::kCommandLine, ctx.now, a.job); !st.ok())
        return st;
    }
  }
  if (!a.error_given) a.error = a.output;  // srun: stderr follows --output
  a.argv = parsed->positionals;
  if (a.help || a.version) return a;
  if (a.argv.empty())
    return InvalidArgument("no command given (usage: trun [OPTIONS] command [args...])");
  if (a.job_id == 0) {
    auto it = ctx.env.find("SLURM_JOB_ID");
    if (it == ctx.env.end() || it->second.empty()) {
      a.allocate = true;  // outside a job: srun makes an allocation first
    } else {
      const std::string& v = it->second;
      if (v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos)
        return InvalidArgument("SLURM_JOB_ID=\"" + v + "\" is not a job id");
      a.job_id = std::stoull(v);
    }
  }
  a.req.set_job_id(a.job_id);
  std::string prog = a.argv[0];
  size_t slash = prog.rfind('/');
  if (a.req.name().empty()) a.req.set_name(slash == std::string::npos ? prog : prog.substr(slash + 1));
  if (!a.job.job_name) a.job.job_name = a.req.name();
  return a;
}

std::string TrunHelp() { return kUsage + TableListedHelp(); }

}  // namespace tessera::cli
