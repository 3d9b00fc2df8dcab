#pragma once
// trun's stdin for the tasks of a step without --pty (srun -i all | -i TASKID; issue 19, h19 s7).
// As srun: by default (-i all) trun's stdin goes to every task, with -i N to task N only (the
// others read /dev/null). The tasks' nodes give each such task a pipe as its stdin (RunTasks
// task_input kForwardedInput); trun reads its stdin on a thread and sends every chunk, and at
// its end an EOF, to each of those nodes (StepAgent SendInput), which write it to every such
// task there (noded/task_stdin.h). A node whose tasks do not read holds the stream back, and
// trun then stops reading (flow control, as srun). When trun's stdin is /dev/null or closed (a
// batch script's) nothing is forwarded: the tasks read /dev/null.
#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "cli/lib/step_agent_api.h"
#include "cli/lib/trun_io.h"
#include "cli/lib/trun_pty.h"
#include "tessera/v1/controller.pb.h"

namespace tessera::cli {

// The RunTasksRequest.task_input value of a task whose stdin trun forwards (not a path: noded
// takes it as "a pipe fed by SendInput").
inline constexpr char kForwardedInput[] = "-";

// The ranks that get trun's stdin for -i `in` (all: every rank; a task id: that one, which must
// be one of the step's tasks; none and file patterns: none).
Result<std::set<uint32_t>> ForwardedRanks(const IoSpec& in,
                                          const tessera::v1::CreateStepResponse& step);

// Copies `in` to the streams on its own thread, from Start to Stop.
class StdinForwarder {
 public:
  StdinForwarder(Terminal& in, uint64_t job_id, uint32_t step_id)
      : in_(in), job_id_(job_id), step_id_(step_id) {}
  ~StdinForwarder() { Stop(); }
  void Start(std::vector<std::unique_ptr<StepInputStream>> streams);
  // Ends the thread (it checks every 100 ms; a write held back by a node ends when that node's
  // tasks have ended), closes the streams. Idempotent.
  void Stop();

 private:
  void Loop();
  Terminal& in_;
  uint64_t job_id_;
  uint32_t step_id_;
  std::vector<std::unique_ptr<StepInputStream>> streams_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tessera::cli
