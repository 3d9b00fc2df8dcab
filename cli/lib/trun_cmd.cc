// trun: run a parallel step inside a job (srun). See trun.h.
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/lib/arg_parser.h"
#include "cli/lib/batch_request.h"
#include "cli/lib/help_text.h"
#include "cli/lib/rank_output.h"
#include "cli/lib/trun.h"
#include "cli/lib/trun_alloc.h"
#include "cli/lib/trun_args.h"
#include "cli/lib/trun_io.h"
#include "cli/lib/trun_nodes.h"
#include "cli/lib/trun_pty.h"
#include "cli/lib/trun_stdin.h"
#include "common/cluster_config.h"
#include "common/gpu_bind.h"
#include "rpc/step_usage.h"

namespace tessera::cli {
namespace {

namespace v1 = tessera::v1;

// One task's end as a single number: exit code, or 128+signal.
int TaskStatus(const v1::TaskOutput::Exit& e) {
  return e.exit_signal() != 0 ? 128 + e.exit_signal() : e.exit_code();
}

// Runs one step over its nodes; owns the per-node clients and the shared outcome.
class StepRun {
 public:
  StepRun(CommandContext& ctx, TrunHooks& hooks, const TrunArgs& args,
          const v1::CreateStepResponse& step, StepOutput& output,
          std::map<std::string, std::string> env, std::map<uint32_t, std::string> inputs,
          std::set<uint32_t> forwarded, std::unique_ptr<Terminal> input_file)
      : ctx_(ctx), hooks_(hooks), args_(args), step_(step), output_(output),
        env_(std::move(env)), inputs_(std::move(inputs)), forwarded_(std::move(forwarded)),
        input_file_(std::move(input_file)) {}

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
    std::unique_ptr<Terminal> term;
    std::unique_ptr<PtyForwarder> pty;  // --pty: to the node of task 0
    int pty_node = args_.pty ? NodeOfRank0() : -1;
    if (pty_node >= 0) {
      term = hooks_.terminal ? hooks_.terminal() : OsTerminal();
      pty = std::make_unique<PtyForwarder>(*term, args_.job_id, step_.step_id());
      pty->Prepare(&pty_rows_, &pty_cols_);
    }
    if (args_.pmi2) OpenPmiStreams();
    std::unique_ptr<Terminal> stdin_term;  // issue 19 (h19 s7): trun's stdin (trun_stdin.h)
    if (input_file_) {  // -i FILE: trun reads it for every task, as srun
      stdin_term = std::move(input_file_);
    } else if (!forwarded_.empty()) {
      stdin_term = hooks_.terminal ? hooks_.terminal() : OsTerminal();
      if (stdin_term->IsNull()) forwarded_.clear();  // the tasks read /dev/null themselves
    }
    std::vector<std::thread> threads;
    for (size_t i = 0; i < clients_.size(); ++i) threads.emplace_back([this, i] { RunNode(i); });
    if (pty) {
      auto in = clients_[static_cast<size_t>(pty_node)]->OpenInput();
      if (in.ok()) pty->Start(std::move(*in));
      else Warn(ctx_, "--pty: cannot forward input to task 0: " + in.status().message());
    }
    std::unique_ptr<StdinForwarder> stdin_fwd;
    if (!forwarded_.empty()) {
      std::vector<std::unique_ptr<StepInputStream>> streams;
      for (int i = 0; i < step_.nodes_size(); ++i) {
        bool any = false;
        for (uint32_t r : step_.nodes(i).ranks()) any = any || forwarded_.count(r);
        if (!any) continue;
        auto s = clients_[static_cast<size_t>(i)]->OpenInput();
        if (s.ok()) streams.push_back(std::move(*s));
        else Warn(ctx_, "cannot forward stdin to the tasks on " + step_.nodes(i).node() + ": " +
                            s.status().message());
      }
      stdin_fwd = std::make_unique<StdinForwarder>(*stdin_term, args_.job_id, step_.step_id());
      stdin_fwd->Start(std::move(streams));
    }
    std::thread waiter;  // --wait=S: S seconds after the first task ended, end the rest
    if (args_.wait_s > 0) waiter = std::thread([this] { WaitLimit(); });
    for (auto& t : threads) t.join();
    if (stdin_fwd) stdin_fwd->Stop();
    if (pty) pty->Stop();  // the terminal back to how it was
    for (auto& in : pmi_inputs_)
      if (in) (void)in->Close();
    {
      std::lock_guard<std::mutex> lock(mu_);
      nodes_done_ = true;
    }
    wait_cv_.notify_all();
    if (waiter.joinable()) waiter.join();
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
    if (usage_.ntasks() > 0) *done->mutable_usage() = usage_;
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

  // --wait: once a task ended, the others get args_.wait_s seconds.
  void WaitLimit() {
    std::unique_lock<std::mutex> lock(mu_);
    wait_cv_.wait(lock, [&] { return nodes_done_ || first_exit_; });
    if (nodes_done_) return;
    if (wait_cv_.wait_for(lock, std::chrono::seconds(args_.wait_s), [&] {
          return nodes_done_ || exits_.size() >= step_.ntasks();
        }))
      return;
    lock.unlock();
    *ctx_.err << ctx_.prog << ": error: first task exited " << args_.wait_s
              << "s ago; terminating the remaining tasks of step " << args_.job_id << "."
              << step_.step_id() << " (--wait)\n";
    {
      std::lock_guard<std::mutex> l(mu_);
      failed_ = true;
    }
    CancelAll();
  }

  // --mpi=pmi2: one input stream per node for the fences' results (before the tasks start).
  void OpenPmiStreams() {
    for (auto& c : clients_) {
      auto in = c->OpenInput();
      if (!in.ok()) {
        Warn(ctx_, "--mpi=pmi2: no input stream to " + c->Target() + ": " + in.status().message());
        pmi_inputs_.emplace_back();
        continue;
      }
      v1::StepInput hello;  // names the step
      hello.set_job_id(args_.job_id);
      hello.set_step_id(step_.step_id());
      (*in)->Write(hello);
      pmi_inputs_.push_back(std::move(*in));
    }
  }

  // --mpi=pmi2: a node's part of a fence; once every node sent its part, the merged keys go to
  // every node (their tasks leave the fence).
  void OnFence(const v1::PmiKvs& part) {
    v1::StepInput done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& f = fences_[part.seq()];
      for (const auto& [k, v] : part.kv()) (*f.first.mutable_kv())[k] = v;
      if (++f.second < static_cast<uint32_t>(step_.nodes_size())) return;
      f.first.set_seq(part.seq());
      *done.mutable_fence_result() = std::move(f.first);
      fences_.erase(part.seq());
    }
    done.set_job_id(args_.job_id);
    done.set_step_id(step_.step_id());
    std::lock_guard<std::mutex> lock(pmi_mu_);
    for (auto& in : pmi_inputs_)
      if (in && !in->Write(done) && !cancelling_)
        Warn(ctx_, "--mpi=pmi2: a node did not take the result of fence " +
                       std::to_string(part.seq()));
  }

  // PMI_process_mapping for a block layout (each node's ranks consecutive, in node order):
  // "(vector,(first node,nodes,tasks per node),...)"; "" for any other layout.
  std::string ProcessMapping() const {
    std::vector<uint32_t> per_node;
    uint32_t next = 0;
    for (const auto& n : step_.nodes()) {
      for (uint32_t r : n.ranks())
        if (r != next++) return "";
      per_node.push_back(static_cast<uint32_t>(n.ranks_size()));
    }
    std::string out = "(vector";
    for (size_t i = 0; i < per_node.size();) {
      size_t j = i;
      while (j < per_node.size() && per_node[j] == per_node[i]) ++j;
      out += ",(" + std::to_string(i) + "," + std::to_string(j - i) + "," +
             std::to_string(per_node[i]) + ")";
      i = j;
    }
    return out + ")";
  }

  // The index of the step node that runs task 0; -1 when none does.
  int NodeOfRank0() const {
    for (int i = 0; i < step_.nodes_size(); ++i)
      for (uint32_t r : step_.nodes(i).ranks())
        if (r == 0) return i;
    return -1;
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
    for (const auto& [k, v] : env_) (*req.mutable_env())[k] = v;
    req.set_cwd(args_.chdir ? AbsolutePath(*args_.chdir, ctx_.cwd) : ctx_.cwd);
    if (args_.pmi2) {  // issue 19 (h19 s6): a PMI-2 server for the tasks there
      req.set_mpi("pmi2");
      req.set_pmi_process_mapping(ProcessMapping());
      req.set_pmi_nodes(static_cast<uint32_t>(step_.nodes_size()));
    }
    if (args_.pty) {  // issue 19 (h19 s6): task 0 on a terminal there
      req.set_pty(true);
      req.set_pty_rows(pty_rows_);
      req.set_pty_cols(pty_cols_);
    }
    for (uint32_t rank : step_.nodes(static_cast<int>(i)).ranks()) {  // -i FILE
      auto in = inputs_.find(rank);
      if (in != inputs_.end()) (*req.mutable_task_input())[rank] = in->second;
      if (forwarded_.count(rank)) (*req.mutable_task_input())[rank] = kForwardedInput;  // -i all|N
    }
    Status st = clients_[i]->RunTasks(req, [this](const v1::TaskOutput& m) { OnOutput(m); });
    if (st.ok() || st.code() == Code::kCancelled) return;
    if (cancelling_) return;  // the step is already being torn down
    Error(st.message());
    CancelAll();
  }

  void OnOutput(const v1::TaskOutput& m) {
    if (m.has_data() && args_.pty) {  // task 0's terminal as it comes; the others discarded
      if (m.data().rank() == 0) ctx_.out->write(m.data().data().data(),
                                                static_cast<std::streamsize>(m.data().data().size())),
                                  ctx_.out->flush();
      return;
    }
    if (m.has_data()) {
      output_.Write(m.data().rank(), m.data().stream(), m.data().data());
      return;
    }
    if (m.has_pmi_fence()) return OnFence(m.pmi_fence());
    if (m.has_usage()) {  // issue 19 (h19): a node's tasks' usage, sent after their exits
      std::lock_guard<std::mutex> lock(mu_);
      rpc::AddStepUsage(m.usage(), &usage_);
      return;
    }
    if (!m.has_exit()) return;
    output_.Flush(m.exit().rank());
    bool bad = TaskStatus(m.exit()) != 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      exits_[m.exit().rank()] = m.exit();
      first_exit_ = true;
    }
    wait_cv_.notify_all();
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
  StepOutput& output_;
  std::map<std::string, std::string> env_;      // the tasks' environment (--export)
  std::map<uint32_t, std::string> inputs_;      // rank -> stdin file (-i)
  std::set<uint32_t> forwarded_;                // ranks that get trun's stdin (-i all|N)
  std::unique_ptr<Terminal> input_file_;        // -i FILE without %t %n %N %u: read here
  std::condition_variable wait_cv_;
  bool nodes_done_ = false, first_exit_ = false;
  std::vector<std::unique_ptr<StepAgentApi>> clients_;
  std::atomic<bool> cancelling_{false};
  int64_t last_sigint_ms_ = -1;  // signal thread only
  uint32_t pty_rows_ = 0, pty_cols_ = 0;  // --pty: the terminal's size at the start
  std::vector<std::unique_ptr<StepInputStream>> pmi_inputs_;  // --mpi=pmi2, by node
  std::mutex pmi_mu_;                                         // writes to them
  std::map<uint32_t, std::pair<v1::PmiKvs, uint32_t>> fences_;  // seq -> merged, nodes in
  mutable std::mutex mu_;
  std::map<uint32_t, v1::TaskOutput::Exit> exits_;
  v1::StepUsage usage_;  // issue 19: every node's tasks' usage, added up
  bool failed_ = false;
  bool user_cancelled_ = false;
};

// The names -o/-e/-i patterns use: from the job's environment inside a job, from the
// allocation outside one.
IoNames PatternNames(CommandContext& ctx, const TrunArgs& a, uint32_t step_id,
                     const v1::JobInfo* alloc) {
  IoNames n;
  n.job_id = a.job_id;
  n.step_id = step_id;
  n.cwd = ctx.cwd;
  n.append = a.append;
  n.user = ctx.names ? ctx.names->UserName(ctx.uid) : "";
  auto env = [&](const char* k) -> std::string {
    auto it = ctx.env.find(k);
    return it == ctx.env.end() ? "" : it->second;
  };
  n.job_name = alloc ? alloc->spec().name() : env("SLURM_JOB_NAME");
  std::string aj = env("SLURM_ARRAY_JOB_ID"), at = env("SLURM_ARRAY_TASK_ID");
  if (!alloc && !aj.empty() && !at.empty() && aj.find_first_not_of("0123456789") == std::string::npos &&
      at.find_first_not_of("0123456789") == std::string::npos && aj.size() < 19 && at.size() < 10) {
    n.array_job_id = std::stoull(aj);
    n.array_index = std::stoll(at);
  }
  return n;
}

// Creates the step in args.job_id, runs it and records its end; the exit status.
int RunStep(CommandContext& ctx, TrunHooks& hooks, ControllerApi& api, TrunArgs& args,
            const v1::JobInfo* alloc) {
  auto env = BuildExportEnv(args.export_spec, ctx.env);
  if (!env.ok()) return Fail(ctx, env.status().message());
  if (alloc)  // the tasks see the allocation's SLURM_* variables, as in a batch job
    for (const auto& [k, v] : AllocationEnv(*alloc, args.job, ctx.cwd)) (*env)[k] = v;
  // Issue 19 (h19 s7): the tasks' GPU binding, for noded (common/gpu_bind.h): --gpu-bind, else
  // per_task:N from --gpus-per-task (srun's implied binding).
  env->erase(kTrunGpuBindEnv);
  if (!args.gpu_bind.empty()) (*env)[kTrunGpuBindEnv] = args.gpu_bind;
  else if (args.req.gpus_per_task() > 0)
    (*env)[kTrunGpuBindEnv] = "per_task:" + std::to_string(args.req.gpus_per_task());
  if (!args.nodelist.empty() || !args.exclude.empty()) {  // -w/-x: any nodes of the job
    v1::JobInfo job;
    if (alloc) {
      job = *alloc;
    } else {
      v1::GetJobRequest g;
      g.set_job_id(args.job_id);
      auto got = api.GetJob(g);
      if (!got.ok()) return Fail(ctx, "cannot read job " + std::to_string(args.job_id) + ": " + got.status().message());
      job = *got;
    }
    auto n = StepNodes(job, args.nodelist, args.exclude, args.req.nodes());
    if (!n.ok()) return Fail(ctx, "cannot create a step in job " + std::to_string(args.job_id) + ": " + n.status().message());
    args.req.set_nodes(static_cast<uint32_t>(n->size()));
    args.req.clear_node_names();
    for (const auto& name : *n) args.req.add_node_names(name);
  }
  auto step = api.CreateStep(args.req);
  // The job's GPUs are held by its other steps: wait and retry, as srun does.
  for (bool said = false; !step.ok() && step.status().code() == Code::kResourceExhausted;) {
    if (!said)
      *ctx.err << "trun: Job " << args.job_id << " step creation temporarily disabled, retrying ("
               << step.status().message() << ")\n";
    said = true;
    if (hooks.sleep_ms) hooks.sleep_ms(500);
    else std::this_thread::sleep_for(std::chrono::milliseconds(500));
    step = api.CreateStep(args.req);
    if (step.ok())
      *ctx.err << "trun: Step created for StepId=" << args.job_id << "." << step->step_id()
               << "\n";
  }
  if (!step.ok())
    return Fail(ctx, "cannot create a step in job " + std::to_string(args.job_id) + ": " +
                         step.status().message());
  if (step->nodes().empty())
    return Fail(ctx, "the controller gave step " + std::to_string(args.job_id) + "." +
                         std::to_string(step->step_id()) + " no nodes");
  v1::CompleteStepRequest done;
  done.set_job_id(args.job_id);
  done.set_step_id(step->step_id());
  IoNames names = PatternNames(ctx, args, step->step_id(), alloc);
  auto output = StepOutput::Open(*ctx.out, *ctx.err, args.label, args.output, args.error, *step, names);
  IoSpec in = args.input;  // srun: -i N that is no task of the step names a file
  if (in.kind == IoSpec::kTask && in.task >= step->ntasks()) in.kind = IoSpec::kFile;
  std::string shared = args.pty ? "" : SharedInputPath(in, names);
  Result<std::unique_ptr<Terminal>> input_file = std::unique_ptr<Terminal>();
  if (!shared.empty()) input_file = OpenInputFile(shared);  // read here, for every task
  Result<std::map<uint32_t, std::string>> inputs = std::map<uint32_t, std::string>();
  if (!output.ok()) inputs = output.status();
  else if (!input_file.ok()) inputs = input_file.status();
  else if (shared.empty()) inputs = TaskInputs(in, *step, names);
  Result<std::set<uint32_t>> forwarded = std::set<uint32_t>();  // --pty: its own input
  if (!args.pty && inputs.ok()) forwarded = ForwardedRanks(shared.empty() ? in : IoSpec(), *step);
  if (!output.ok() || !inputs.ok() || !forwarded.ok()) {  // nothing ran: the step failed
    done.set_state(v1::FAILED);
    done.set_exit_code(1);
    (void)api.CompleteStep(done);
    return Fail(ctx, !output.ok()   ? output.status().message()
                     : !inputs.ok() ? inputs.status().message()
                                    : forwarded.status().message());
  }
  StepRun run(ctx, hooks, args, *step, **output, std::move(*env), std::move(*inputs),
              std::move(*forwarded), std::move(*input_file));
  run.Run();
  int rc = run.ExitStatus(&done);
  done.set_job_id(args.job_id);
  done.set_step_id(step->step_id());
  auto completed = api.CompleteStep(done);
  if (!completed.ok())
    Warn(ctx, "cannot record the end of step " + std::to_string(args.job_id) + "." +
                  std::to_string(step->step_id()) + ": " + completed.status().message());
  return rc;
}

}  // namespace

int RunTrunWith(CommandContext& ctx, TrunHooks& hooks) {
  auto args = ParseTrunArgs(ctx);
  if (!args.ok()) return Fail(ctx, args.status().message());
  if (args->help) return *ctx.out << HelpText(ctx, TrunHelp()), 0;
  if (args->version) return *ctx.out << VersionLine() << "\n", 0;
  auto api = ctx.connect();
  if (!api.ok()) return Fail(ctx, api.status().message());
  std::optional<v1::JobInfo> alloc;
  if (args->allocate) {  // srun outside a job: an allocation first (trun_alloc.h)
    auto job = CreateAllocation(ctx, **api, args->job, AllocStyle::kSrun);
    if (!job.ok()) return Fail(ctx, job.status().message());
    alloc = *job;
    args->job_id = job->job_id();
    args->req.set_job_id(args->job_id);
  }
  int rc = RunStep(ctx, hooks, **api, *args, alloc ? &*alloc : nullptr);
  if (alloc) ReleaseAllocation(ctx, **api, alloc->job_id(), AllocStyle::kSrun);
  return rc;
}

}  // namespace tessera::cli
