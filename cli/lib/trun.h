#pragma once
// trun (srun): runs a parallel step inside a job's allocation. RunTrun (command.h) is the
// production entry point; RunTrunWith takes the OS-facing pieces as hooks so tests can run it
// against fake nodes.
//
// Flow: options -> job id (--jobid, else SLURM_JOB_ID) -> Controller.CreateStep -> one thread
// per StepNode calling StepAgent.RunTasks (argv, the caller's environment and cwd) -> output per
// rank line by line (rank_output.h) -> Controller.CompleteStep -> exit status. trun's stdin
// goes to every task (or to task N with -i N; trun_stdin.h).
// Signals: SIGINT, SIGTERM, SIGUSR1, SIGUSR2 are forwarded to every node (SignalTasks); a second
// SIGINT within 1 s cancels the step (every RunTasks call is cancelled: noded kills the tasks).
// --kill-on-bad-exit: the first task that ends non-zero (or by a signal) cancels the rest.
// A node that cannot be reached, or refuses, fails the step: the other nodes are cancelled.
// Exit status: the worst task's (largest value, a signal counts as 128+signal); 1 when a node
// failed and no task reported worse. CompleteStep: COMPLETED (every task 0), CANCELLED (the
// user cancelled), else FAILED, with the worst task's exit code and signal.
#include <cstdint>
#include <functional>
#include <memory>

#include "cli/lib/command.h"
#include "cli/lib/step_agent_api.h"
#include "cli/lib/trun_pty.h"

namespace tessera::cli {

struct TrunHooks {
  std::function<Result<std::unique_ptr<StepAgentApi>>(const pb::StepNode& node)> connect_node;
  // Starts delivering the forwarded signals to `handler` (from another thread) and returns a
  // function that stops it. Empty: no signal handling.
  std::function<std::function<void()>(std::function<void(int)> handler)> watch_signals;
  // Monotonic milliseconds (the second-SIGINT window).
  std::function<int64_t()> mono_ms;
  // Sleeps `ms` between CreateStep retries while the job's GPUs are busy (empty: really sleep).
  std::function<void(int64_t ms)> sleep_ms;
  // --pty (trun_pty.h) and -i all|N (trun_stdin.h): trun's stdin (empty: OsTerminal, fd 0).
  std::function<std::unique_ptr<Terminal>()> terminal;
};

int RunTrunWith(CommandContext& ctx, TrunHooks& hooks);

}  // namespace tessera::cli
