#pragma once
// trun --pty (srun --pty; issue 19, h19 s6): task 0 runs on a pseudo-terminal that noded
// allocates on its node (noded/task_set.h); trun forwards its own stdin there (StepAgent
// SendInput) and task 0's output comes back as stream 1, written to trun's stdout as it
// arrives. The other tasks' output is discarded (srun: their --output/--error are /dev/null).
// When trun's stdin is a terminal it is put in raw mode for the step and restored at the end
// (Ctrl-C, Ctrl-Z, Ctrl-D then reach the remote terminal as characters, as with srun --pty),
// and window size changes are sent (the remote terminal's foreground group gets SIGWINCH).
// Otherwise stdin's bytes are forwarded and its end becomes an end-of-file on the terminal.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "cli/lib/step_agent_api.h"

namespace tessera::cli {

// trun's side of the terminal: stdin. OS-facing (OsTerminal); tests use a fake.
class Terminal {
 public:
  virtual ~Terminal() = default;
  virtual bool IsTerminal() = 0;
  // The window size; false when unknown.
  virtual bool Size(uint32_t* rows, uint32_t* cols) = 0;
  virtual void MakeRaw() = 0;   // only called when IsTerminal()
  virtual void Restore() = 0;   // undoes MakeRaw (no-op otherwise)
  // Waits up to timeout_ms for input: the bytes read; "" on a timeout or, with *eof set, at
  // the end of stdin.
  virtual std::string Read(int timeout_ms, bool* eof) = 0;
  // Issue 19 (h19 s7): stdin is /dev/null or closed: nothing to forward (the tasks then read
  // /dev/null themselves).
  virtual bool IsNull() { return false; }
};
// fd 0. A terminal is only read while trun is in its foreground process group (in the
// background Read waits instead of being stopped by SIGTTIN).
std::unique_ptr<Terminal> OsTerminal();
// Issue 19 (h19 s7, srun -i FILE): a file trun reads for the tasks, as stdin (NotFound with
// srun's "Could not open stdin file" when it cannot be opened).
Result<std::unique_ptr<Terminal>> OpenInputFile(const std::string& path);

// Forwards the terminal to a node's input stream on its own thread, from Start to Stop. The
// window size is checked every ~100 ms and sent when it changed.
class PtyForwarder {
 public:
  PtyForwarder(Terminal& term, uint64_t job_id, uint32_t step_id)
      : term_(term), job_id_(job_id), step_id_(step_id) {}
  ~PtyForwarder() { Stop(); }
  // The window size for RunTasksRequest (0, 0 when unknown) and raw mode when a terminal.
  void Prepare(uint32_t* rows, uint32_t* cols);
  void Start(std::unique_ptr<StepInputStream> in);
  // Joins the thread, closes the stream, restores the terminal. Idempotent.
  void Stop();

 private:
  void Loop();
  Terminal& term_;
  uint64_t job_id_;
  uint32_t step_id_;
  bool raw_ = false;
  uint32_t rows_ = 0, cols_ = 0;
  std::unique_ptr<StepInputStream> in_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tessera::cli
