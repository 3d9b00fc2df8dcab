#pragma once
// The processes of one step on this node (StepAgent.RunTasks): one per granted rank, started
// together, supervised by the calling thread until every one has ended. OS-facing.
//
// Each task: its own process group; the step user's supplementary groups, gid and uid (when
// noded is root; otherwise only noded's own uid can run, else Start fails); joins the job's
// cgroup before exec when `cgroup` is set (noded moves it while it waits on a gate pipe; it first
// closes every descriptor it inherited but its own, so that tasks started at once by other
// threads never wait on each other's gates);
// stdin /dev/null (a file with trun -i FILE; a pipe fed by Input() for forward_stdin tasks,
// task_stdin.h); stdout and stderr are pipes read by Run; chdir(cwd); execvp of argv with the
// task's own environment (PATH from it). An exec failure prints
// "tessera-noded: error: execve(): <prog>: <reason>" on the task's stderr and exits 127
// (not found) or 126. The child only makes async-signal-safe calls between fork and exec
// (noded is multi-threaded): everything it needs is prepared before the fork.
//
// Run streams Data chunks (rank, stream 1/2) in the order read and one Exit per task once the
// task was reaped and its pipes closed (output of a task always precedes its Exit). When a task's
// main process ends, its process group is SIGKILLed (leftover children); pipes still held open
// by escapees are closed 2 s later. Cancellation (the `cancelled` callback, a failed Emit, or
// Cancel()): SIGTERM to every live task's process group, SIGKILL kill_wait_ms later.
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <optional>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "noded/cgroup.h"
#include "noded/pmi2.h"
#include "noded/task_stdin.h"
#include "noded/task_usage.h"
#include "tessera/v1/step.pb.h"

namespace tessera::noded {

struct TaskPlan {
  struct Task {
    uint32_t rank = 0;
    std::vector<std::string> env;  // "KEY=VALUE"
    std::string input;             // issue 19 (trun -i): stdin file, opened as the user; "" = /dev/null
    bool forward_stdin = false;    // issue 19 (h19 s7, -i all|N): a pipe fed by Input()
  };
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;       // supplementary groups (UserGroups)
  std::string cwd;
  std::vector<std::string> argv;
  std::vector<Task> tasks;
  CgroupManager* cgroup = nullptr;  // not owned; nullptr = no cgroup
  std::string cgroup_name;
  // Issue 19 (h19): per-task accounting cgroups "<cgroup_name>/<usage_step>/task_<rank>"
  // (task_usage.h); nullptr = usage from wait4's rusage only. Not owned.
  TaskUsageCgroups* usage = nullptr;
  std::string usage_step;          // "step_<id>"
  std::string node_name;           // names this node in the usage
  int64_t kill_wait_ms = 30000;
  // Issue 19 (h19 s6, trun --pty): rank 0 runs on a pseudo-terminal allocated here: its own
  // session with the pty's slave as controlling terminal and as stdin, stdout and stderr
  // (owned by the user, window pty_rows x pty_cols when given); the master's output is its
  // stream 1; Input() writes to the master.
  bool pty = false;
  uint16_t pty_rows = 0, pty_cols = 0;
  // Issue 19 (h19 s6, trun --mpi=pmi2): every task gets a socket to a PMI-2 server here
  // (pmi2.h) as fd 3 with PMI_FD=3, PMI_RANK, PMI_SIZE and PMI_JOBID; a fence all local tasks
  // entered is emitted as TaskOutput.pmi_fence and answered through Input(fence_result). A task
  // calling PMI2_Abort cancels the set. Unset: no PMI.
  std::optional<Pmi2Server::Options> pmi;
};

// The supplementary group list of `user` with primary group `gid` (getgrouplist).
Result<std::vector<gid_t>> UserGroups(const std::string& user, gid_t gid);

class TaskSet {
 public:
  // Returns false when the receiver is gone (the set is then cancelled, nothing more emitted).
  using Emit = std::function<bool(const tessera::v1::TaskOutput&)>;
  using LogFn = std::function<void(const std::string&)>;

  TaskSet(TaskPlan plan, LogFn log);
  ~TaskSet();  // SIGKILLs and reaps whatever is still running
  TaskSet(const TaskSet&) = delete;
  TaskSet& operator=(const TaskSet&) = delete;

  // Forks every task. On failure the tasks already started are killed and reaped.
  Status Start();
  // Blocks until every task has ended (see the header comment).
  void Run(const Emit& emit, const std::function<bool()>& cancelled);
  // Thread-safe: signal to every live task's process group.
  void Signal(int sig);
  // Thread-safe (issue 19, --pty, --mpi=pmi2): terminal input for rank 0's pty (bytes, EOF as
  // the terminal's VEOF character, a new window size), or trun's stdin for the forward_stdin
  // tasks (bytes, EOF closes their pipes; UNAVAILABLE while one does not read: retry later);
  // FAILED_PRECONDITION with neither here. A PMI-2 fence's result (FAILED_PRECONDITION without
  // PMI). A message naming only the step is fine.
  Status Input(const tessera::v1::StepInput& in);
  // Thread-safe: asks Run to stop the tasks (SIGTERM, kill_wait, SIGKILL).
  void Cancel() { cancel_ = true; }
  // Thread-safe (issue 19, sstat): the live usage of the tasks still running here.
  tessera::v1::StepUsage LiveUsage();
  // Thread-safe (issue 19, sattach): a copy of the tasks' output (Data and Exit messages) from
  // now on, queued for another thread. Next() blocks up to `wait_ms` for a message; nullopt
  // with *ended once the set has finished (every task's Exit was queued before). At most 4096
  // messages wait per listener; a slower reader loses the oldest (counted in dropped).
  class Attached {
   public:
    std::optional<tessera::v1::TaskOutput> Next(int wait_ms, bool* ended);
    uint64_t dropped() const;

   private:
    friend class TaskSet;
    void Push(const tessera::v1::TaskOutput& m);
    void End();
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<tessera::v1::TaskOutput> q_;
    bool ended_ = false;
    uint64_t dropped_ = 0;
  };
  std::shared_ptr<Attached> Attach();
  void Detach(const std::shared_ptr<Attached>& a);

 private:
  struct Proc {
    uint32_t rank = 0;
    pid_t pid = -1;
    int out = -1, err = -1;
    bool reaped = false;
    int status = 0;
    int64_t reaped_ms = 0;
    bool exit_sent = false;
    TaskUsage usage;            // sampled while it runs; final figures after it ended
    std::string acct;           // its accounting cgroup; "" = none
    struct rusage ru {};        // wait4's, for tasks without one
    int pmi = -1;               // --mpi=pmi2: our end of its PMI socket (under pmi_mu_)
  };
  // --mpi=pmi2: serves what task p wrote on its PMI socket (Run's thread).
  void ServePmi(Proc& p, const Emit& emit);
  void ClosePmi(Proc& p, const Emit& emit);
  // Samples each running task's processes (VmSize, RSS) at most once a second.
  void SampleUsage(int64_t now);
  // Sends this node's usage (one TaskOutput.usage) and removes the accounting cgroups.
  void FinishUsage(const Emit& emit);
  int64_t sampled_ms_ = 0;
  std::mutex attached_mu_;
  std::vector<std::shared_ptr<Attached>> attached_;
  bool finished_ = false;  // under attached_mu_: Run returned
  Status StartOne(size_t index, int devnull);
  void ReadSome(Proc& p, int* fd, uint32_t stream, const Emit& emit);
  void Reap(int64_t now);
  void KillAll(int sig);
  bool Send(const Emit& emit, const tessera::v1::TaskOutput& m);

  TaskPlan plan_;
  LogFn log_;
  std::mutex mu_;  // guards procs_[*].pid/reaped against Signal from other threads
  std::vector<Proc> procs_;
  std::atomic<bool> cancel_{false};
  bool receiver_gone_ = false;
  std::mutex pty_mu_;
  int pty_in_ = -1;  // a dup of rank 0's pty master for Input(); -1 without a pty
  TaskStdin stdin_;  // issue 19 (h19 s7): the forward_stdin tasks' pipes
  std::mutex pmi_mu_;  // guards pmi_ and every Proc::pmi
  std::unique_ptr<Pmi2Server> pmi_;
};

}  // namespace tessera::noded
