// trun: run a parallel step inside a job (srun). See trun.h.
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli/lib/arg_parser.h"
#include "cli/lib/rank_output.h"
#include "cli/lib/trun.h"
#include "common/cluster_config.h"

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
      --gpus-per-task=[TYPE:]N  N of the job's GPUs per task
                              (a step asking GPUs gets its own: CUDA_VISIBLE_DEVICES lists only
                              them; while other steps hold the job's GPUs it waits, as srun)
  -l, --label                 prefix each output line with the task's rank ("0: ...")
  -K, --kill-on-bad-exit[=0|1]  kill the step when a task exits non-zero
  -J, --job-name=NAME         name of the step (default: the command's name)
      --jobid=ID              run inside job ID (default: $SLURM_JOB_ID)
      --reservation=NAME      accepted (a step runs in its job's allocation, which tbatch
                              --reservation placed in the reservation)
  -u, --unbuffered            accepted (output is always passed through unbuffered)
  -v, --verbose               accepted for compatibility
  -h, --help                  show this help
  -V, --version               show the version
Ctrl-C forwards SIGINT to the tasks; a second Ctrl-C within 1 second cancels the step.
SIGTERM, SIGUSR1 and SIGUSR2 are forwarded too. Exit status: the worst task's (128+signal for a
task killed by a signal). Environment: TESSERA_CONF names the configuration file.
)";

enum Opt { kNtasks = 1, kPerNode, kNodes, kCpus, kLabel, kKill, kName, kJobid, kUnbuf, kVerbose,
           kHelp, kVersion, kIgnoredArg, kGres, kGpusPerNode, kGpus, kGpusPerTask };

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
    {"mpi", 0, ArgKind::kRequired, kIgnoredArg},
    {"cpu-bind", 0, ArgKind::kRequired, kIgnoredArg},
    {"reservation", 0, ArgKind::kRequired, kIgnoredArg},  // the job's own (issue 17 §1)
    {"gres", 0, ArgKind::kRequired, kGres},
    {"gpus-per-node", 0, ArgKind::kRequired, kGpusPerNode},
    {"gpus", 'G', ArgKind::kRequired, kGpus},
    {"gpus-per-task", 0, ArgKind::kRequired, kGpusPerTask},
};

struct TrunArgs {
  v1::CreateStepRequest req;
  uint64_t job_id = 0;
  bool label = false, kill_on_bad_exit = false, help = false, version = false;
  std::vector<std::string> argv;
};

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
    default: return Status::Ok();  // -u, -v, --mpi, --cpu-bind: accepted, nothing to do
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

// One task's end as a single number: exit code, or 128+signal.
int TaskStatus(const v1::TaskOutput::Exit& e) {
  return e.exit_signal() != 0 ? 128 + e.exit_signal() : e.exit_code();
}

// Runs one step over its nodes; owns the per-node clients and the shared outcome.
class StepRun {
 public:
  StepRun(CommandContext& ctx, TrunHooks& hooks, const TrunArgs& args,
          const v1::CreateStepResponse& step)
      : ctx_(ctx), hooks_(hooks), args_(args), step_(step),
        output_(*ctx.out, *ctx.err, args.label, step.ntasks()) {}

  // Connects to every node, runs, waits (a node that cannot be opened fails the step).
  void Run() {
    for (const auto& n : step_.nodes()) {
      auto c = hooks_.connect_node(n);
      if (!c.ok()) {
        Error("cannot connect to node " + n.node() + ": " + c.status().message());
        return;
      }
      clients_.push_back(std::move(*c));
    }
    std::function<void()> stop_signals;
    if (hooks_.watch_signals) stop_signals = hooks_.watch_signals([this](int s) { OnSignal(s); });
    std::vector<std::thread> threads;
    for (size_t i = 0; i < clients_.size(); ++i) threads.emplace_back([this, i] { RunNode(i); });
    for (auto& t : threads) t.join();
    if (stop_signals) stop_signals();
    output_.FlushAll();
  }

  // The exit status and the CompleteStep request.
  int ExitStatus(v1::CompleteStepRequest* done) const {
    std::lock_guard<std::mutex> lock(mu_);
    int worst = 0;
    const v1::TaskOutput::Exit* worst_exit = nullptr;
    for (const auto& [rank, e] : exits_) {
      if (!worst_exit || TaskStatus(e) > worst) {
        worst = TaskStatus(e);
        worst_exit = &e;
      }
    }
    bool missing = exits_.size() < step_.ntasks();
    if (worst_exit) {
      done->set_exit_code(worst_exit->exit_code());
      done->set_exit_signal(worst_exit->exit_signal());
    }
    v1::JobState state = v1::COMPLETED;
    if (user_cancelled_) state = v1::CANCELLED;
    else if (worst != 0 || failed_ || missing) state = v1::FAILED;
    done->set_state(state);
    if (worst == 0 && (failed_ || missing || user_cancelled_)) {
      worst = 1;
      if (!worst_exit) done->set_exit_code(1);
    }
    return worst;
  }

 private:
  void Error(const std::string& msg) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      failed_ = true;
    }
    output_.FlushAll();
    Fail(ctx_, msg);
  }

  void CancelAll() {
    if (cancelling_.exchange(true)) return;
    for (auto& c : clients_) c->Cancel();
  }

  void RunNode(size_t i) {
    v1::RunTasksRequest req;
    req.set_job_id(args_.job_id);
    req.set_step_id(step_.step_id());
    for (const auto& a : args_.argv) req.add_argv(a);
    for (const auto& [k, v] : ctx_.env) (*req.mutable_env())[k] = v;
    req.set_cwd(ctx_.cwd);
    Status st = clients_[i]->RunTasks(req, [this](const v1::TaskOutput& m) { OnOutput(m); });
    if (st.ok() || st.code() == Code::kCancelled) return;
    if (cancelling_) return;  // the step is already being torn down
    Error(st.message());
    CancelAll();
  }

  void OnOutput(const v1::TaskOutput& m) {
    if (m.has_data()) {
      output_.Write(m.data().rank(), m.data().stream(), m.data().data());
      return;
    }
    if (!m.has_exit()) return;
    output_.Flush(m.exit().rank());
    bool bad = TaskStatus(m.exit()) != 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      exits_[m.exit().rank()] = m.exit();
    }
    if (bad && args_.kill_on_bad_exit && !cancelling_) {
      *ctx_.err << ctx_.prog << ": error: task " << m.exit().rank() << " exited with status "
                << TaskStatus(m.exit()) << ": terminating the step (--kill-on-bad-exit)\n";
      CancelAll();
    }
  }

  void OnSignal(int sig) {
    if (sig == SIGINT) {
      int64_t now = hooks_.mono_ms ? hooks_.mono_ms() : 0;
      if (last_sigint_ms_ >= 0 && now - last_sigint_ms_ <= 1000) {
        *ctx_.err << ctx_.prog << ": forcing termination of step " << args_.job_id << "."
                  << step_.step_id() << "\n";
        {
          std::lock_guard<std::mutex> lock(mu_);
          user_cancelled_ = true;
        }
        CancelAll();
        return;
      }
      last_sigint_ms_ = now;
      *ctx_.err << ctx_.prog << ": interrupt (one more within 1 sec to abort)\n";
    }
    v1::SignalTasksRequest req;
    req.set_job_id(args_.job_id);
    req.set_step_id(step_.step_id());
    req.set_signal(sig);
    for (auto& c : clients_) {
      Status st = c->SignalTasks(req);
      if (!st.ok())
        Warn(ctx_, "cannot forward signal " + std::to_string(sig) + ": " + st.message());
    }
  }

  CommandContext& ctx_;
  TrunHooks& hooks_;
  const TrunArgs& args_;
  const v1::CreateStepResponse& step_;
  RankOutput output_;
  std::vector<std::unique_ptr<StepAgentApi>> clients_;
  std::atomic<bool> cancelling_{false};
  int64_t last_sigint_ms_ = -1;  // signal thread only
  mutable std::mutex mu_;
  std::map<uint32_t, v1::TaskOutput::Exit> exits_;
  bool failed_ = false;
  bool user_cancelled_ = false;
};

Result<TrunArgs> ParseTrunArgs(CommandContext& ctx) {
  auto parsed = ParseArgs(ctx.args, kSpecs, /*stop_at_positional=*/true);
  if (!parsed.ok()) return parsed.status();
  TrunArgs a;
  for (const auto& o : parsed->options)
    if (Status st = ApplyOption(o, a); !st.ok()) return st;
  a.argv = parsed->positionals;
  if (a.help || a.version) return a;
  if (a.argv.empty())
    return InvalidArgument("no command given (usage: trun [OPTIONS] command [args...])");
  if (a.job_id == 0) {
    auto it = ctx.env.find("SLURM_JOB_ID");
    if (it == ctx.env.end() || it->second.empty())
      return FailedPrecondition(
          "no job allocation: SLURM_JOB_ID is not set (use trun inside a job, or --jobid)");
    const std::string& v = it->second;
    if (v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos)
      return InvalidArgument("SLURM_JOB_ID=\"" + v + "\" is not a job id");
    a.job_id = std::stoull(v);
  }
  a.req.set_job_id(a.job_id);
  if (a.req.name().empty()) {
    std::string prog = a.argv[0];
    size_t slash = prog.rfind('/');
    a.req.set_name(slash == std::string::npos ? prog : prog.substr(slash + 1));
  }
  return a;
}

}  // namespace

int RunTrunWith(CommandContext& ctx, TrunHooks& hooks) {
  auto args = ParseTrunArgs(ctx);
  if (!args.ok()) return Fail(ctx, args.status().message());
  if (args->help) return *ctx.out << kUsage, 0;
  if (args->version) return *ctx.out << VersionLine() << "\n", 0;
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  auto step = (*api)->CreateStep(args->req);
  // The job's GPUs are held by its other steps: wait and retry, as srun does.
  for (bool said = false; !step.ok() && step.status().code() == Code::kResourceExhausted;) {
    if (!said)
      *ctx.err << "trun: Job " << args->job_id << " step creation temporarily disabled, retrying ("
               << step.status().message() << ")\n";
    said = true;
    if (hooks.sleep_ms) hooks.sleep_ms(500);
    else std::this_thread::sleep_for(std::chrono::milliseconds(500));
    step = (*api)->CreateStep(args->req);
    if (step.ok())
      *ctx.err << "trun: Step created for StepId=" << args->job_id << "." << step->step_id()
               << "\n";
  }
  if (!step.ok())
    return Fail(ctx, "cannot create a step in job " + std::to_string(args->job_id) + ": " +
                         step.status().message());
  if (step->nodes().empty())
    return Fail(ctx, "the controller gave step " + std::to_string(args->job_id) + "." +
                         std::to_string(step->step_id()) + " no nodes");
  StepRun run(ctx, hooks, *args, *step);
  run.Run();
  v1::CompleteStepRequest done;
  int rc = run.ExitStatus(&done);
  done.set_job_id(args->job_id);
  done.set_step_id(step->step_id());
  auto completed = (*api)->CompleteStep(done);
  if (!completed.ok())
    Warn(ctx, "cannot record the end of step " + std::to_string(args->job_id) + "." +
                  std::to_string(step->step_id()) + ": " + completed.status().message());
  return rc;
}

}  // namespace tessera::cli
