#pragma once
// The stdin pipes of a step's tasks on this node that read trun's stdin (issue 19, h19 s7:
// srun -i all | -i TASKID; RunTasks task_input "-" for the rank). Thread-safe.
//
// Push (StepAgent SendInput's thread) queues a chunk for every open pipe and writes what the
// pipes take at once; Flush (TaskSet::Run's loop, when poll says a pipe is writable) writes the
// rest. A pipe is closed (the task reads end-of-file) once EOF was pushed and its queue is
// written, or when its reader is gone (EPIPE: the queue is dropped). Push refuses a chunk with
// kUnavailable while a pipe's queue holds more than `limit` bytes (the task does not read):
// the caller retries later, which holds trun back. The write ends are non-blocking and
// close-on-exec; writing to a pipe without reader needs SIGPIPE ignored (noded does).
#include <poll.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::noded {

class TaskStdin {
 public:
  explicit TaskStdin(size_t limit = 1 << 20) : limit_(limit) {}
  ~TaskStdin();
  TaskStdin(const TaskStdin&) = delete;
  TaskStdin& operator=(const TaskStdin&) = delete;

  // Takes the write end `fd` of `rank`'s stdin pipe (made non-blocking here).
  void Add(uint32_t rank, int fd);
  bool empty() const;
  Status Push(const std::string& data, bool eof);
  void Flush();
  // pollfds (POLLOUT) of the pipes with queued bytes.
  void PollFds(std::vector<pollfd>* fds) const;
  // The task ended: its pipe goes, queue and all.
  void Drop(uint32_t rank);
  void CloseAll();

 private:
  struct Pipe {
    int fd = -1;
    std::string queue;
  };
  void WriteSome(Pipe& p);  // under mu_
  size_t limit_;
  mutable std::mutex mu_;
  std::map<uint32_t, Pipe> pipes_;
  bool eof_ = false;
};

}  // namespace tessera::noded
