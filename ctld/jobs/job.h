#pragma once
// The controller's model of a job and of one transition in its life (event sourcing).
//
// A JobRecord is never edited in place by callers: every change is a JobEvent, and
// Apply(record, event) is the only function that moves a record forward. The store persists the
// event and the resulting record in one transaction; recovery loads records and can replay
// events to verify them.
#include <boost/describe.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/job_state.h"
#include "ctld/jobs/shared_string.h"
#include "ctld/jobs/sparse_string.h"

namespace tessera::ctld {

struct ResourceReq {
  uint32_t cpus = 0;
  uint64_t mem_mib = 0;
  uint32_t gpus = 0;
  SparseString gpu_model;  // "" = any whole GPU; a type ("a100") or a MIG profile ("3g.40gb")
  uint32_t mps = 0;        // --gres=mps:N (percent of one GPU's MPS)
  uint32_t shards = 0;     // --gres=shard:N (time-sliced replicas of one GPU)
  // gpusched (issue 14): --gpu-mem per GPU unit when gpus > 0 (the smallest fitting MIG profile
  // or whole GPU, ctld/sched/gpu_mem.h); the GPU type of mps/shards (--gres=mps:a100:50), "" = any.
  uint64_t gpu_mem_mib = 0;
  SparseString share_model;
};
BOOST_DESCRIBE_STRUCT(ResourceReq, (),
                      (cpus, mem_mib, gpus, gpu_model, mps, shards, gpu_mem_mib, share_model))

struct TaskGroupSpec {
  SparseString name;
  uint32_t count = 1;
  ResourceReq per_task;
  uint32_t tasks_per_node = 0;
  ResourceReq per_node;
};
BOOST_DESCRIBE_STRUCT(TaskGroupSpec, (), (name, count, per_task, tasks_per_node, per_node))

// What the user asked for (mirror of tessera.v1.JobSpec, validated). Fields most jobs leave
// empty are SparseStrings (8 bytes when empty): memory per pending job (issue #6).
struct JobSpec {
  SharedString name;
  SparseString script;  // kept in memory only until submit (job_payloads)
  std::vector<std::string> argv;
  SharedString workdir;
  // The environment (common/env_block.h). Not described: it is moved to the JobPayload at submit.
  SparseString env_block;
  SharedString stdout_pattern;
  SparseString stderr_pattern;
  SparseString partition;  // as requested ("" = default)
  SparseString qos;
  SparseString account;
  std::vector<TaskGroupSpec> task_groups;
  uint32_t gang_min = 0;
  uint32_t nodes_min = 0;
  uint32_t nodes_max = 0;
  int64_t time_limit_s = 0;
  bool hold = false;
  bool requeue = false;
  SparseString comment;
  bool exclusive = false;
  SparseString constraint;
  SparseString nodelist;
  SparseString exclude;
  int32_t nice = 0;
  int64_t begin_time = 0;
  SparseString dependency;
  SparseString array;           // --array as given ("0-15%4")
  // Topology (issue 15): --switches=N[@wait] (tree) and --segment=N (block); 0 = not asked.
  // Records written before these fields decode with 0 (the codec is lenient).
  uint32_t switches = 0;
  int64_t switches_wait_s = 0;
  uint32_t segment = 0;
  // tessera-bridge (issue 18): the Kubernetes pod UIDs this job's tasks run, in rank order,
  // separated by spaces (JobSpec.k8s_pod_uids); set by root only, never updated.
  SparseString k8s_pod_uids;
  SparseString reservation;     // --reservation (issue 17 §1); "" = none
};
BOOST_DESCRIBE_STRUCT(JobSpec, (),
                      (name, script, argv, workdir, stdout_pattern, stderr_pattern,
                       partition, qos, account, task_groups, gang_min, nodes_min, nodes_max,
                       time_limit_s, hold, requeue, comment, exclusive, constraint, nodelist,
                       exclude, nice, begin_time, dependency, array, switches, switches_wait_s,
                       segment, k8s_pod_uids, reservation))

struct NodeAlloc {
  std::string node;
  uint32_t cpus = 0;
  uint64_t mem_mib = 0;
  std::vector<uint32_t> gpu_indices;    // whole GPUs; with mps/shards: the one GPU shared
  uint32_t tasks = 0;
  std::vector<std::string> mig_uuids;   // MIG instances held ("MIG-...")
  uint32_t mps = 0;                     // gres/mps count of gpu_indices[0] (not held whole)
  uint32_t shards = 0;                  // time-slice replicas of gpu_indices[0] (not held whole)
  // CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: mps x 100 / the GPU's gres/mps count (gpu_shares.h
  // MpsPercent); 0 = mps itself (a GPU with the default count of 100, or an older record).
  uint32_t mps_percent = 0;
};
BOOST_DESCRIBE_STRUCT(NodeAlloc, (), (node, cpus, mem_mib, gpu_indices, tasks, mig_uuids, mps,
                                      shards, mps_percent))

struct JobRecord {
  uint64_t job_id = 0;
  JobSpec spec;
  uint32_t uid = 0;
  uint32_t gid = 0;
  SharedString user;
  SharedString submit_host;
  int state = static_cast<int>(JobState::kPending);  // tessera::JobState
  std::string reason;
  bool held = false;
  int64_t priority = 0;        // admin-set priority; 0 = computed
  int64_t submit_time = 0;
  int64_t eligible_time = 0;
  int64_t start_time = 0;
  int64_t end_time = 0;
  int32_t exit_code = 0;
  int32_t exit_signal = 0;
  std::vector<NodeAlloc> alloc;
  uint32_t requeue_count = 0;
  SharedString partition;      // resolved
  int64_t time_limit_s = -1;   // resolved; -1 unlimited
  bool cancel_requested = false;
  SparseString message;        // why it failed, when known
  uint64_t array_job_id = 0;   // array elements: the id of the array's first element
  uint32_t array_task_id = 0;
  uint32_t array_max_running = 0;
  uint32_t next_step_id = 0;   // trun steps: 0, 1, 2, ...
  bool requeue_requested = false;  // requeue (not end) when the running job reports its end
  // The run (launch number) of the job's current or last start: set by every `started` event
  // to one more than any earlier run (and above requeue_count), so it changes on every requeue.
  // Launches, signals and acks carry it to the node and the node's reports carry it back; a
  // report of another run never ends this one. 0 = never started, or a record written before
  // runs existed (then reports are matched by node only, as before).
  uint64_t run = 0;
  // Issue 16 §4 (h16g): seconds the current run spent suspended (closed suspensions; sacct's
  // Suspended; the time limit is pushed by it), and when the open suspension began (0 = not
  // suspended). Both reset by `started`.
  int64_t suspended_s = 0;
  int64_t suspend_time = 0;
  // The grace deadline of a CANCEL/REQUEUE preemption of the current run (`preempted` event
  // time + grace_time): durable, so a restarted ctld still cancels the victim then. 0 = none.
  int64_t preempt_kill_at = 0;
  // Memory only (not described, so never persisted): the backfill reservation's start time.
  int64_t expected_start = 0;
  // Memory only (issue 19): the nodes of that reservation (squeue's SCHEDNODES); "" none.
  std::string sched_nodes;

  JobState State() const { return static_cast<JobState>(state); }
  uint32_t NumTasks() const;
  uint32_t NumCpus() const;     // allocated when running, requested otherwise
  std::vector<std::string> NodeNames() const;
};
BOOST_DESCRIBE_STRUCT(JobRecord, (),
                      (job_id, spec, uid, gid, user, submit_host, state, reason, held, priority,
                       submit_time, eligible_time, start_time, end_time, exit_code, exit_signal,
                       alloc, requeue_count, partition, time_limit_s, cancel_requested, message,
                       array_job_id, array_task_id, array_max_running, next_step_id,
                       requeue_requested, run, suspended_s, suspend_time, preempt_kill_at))

// Event types. Each documents the detail fields it carries.
namespace event {
inline constexpr char kSubmitted[] = "submitted";    // detail: the whole initial JobRecord
inline constexpr char kHeld[] = "held";              // {}
inline constexpr char kReleased[] = "released";      // {}
inline constexpr char kStarted[] = "started";        // {alloc, start_time}
// kCancelRequested's detail: {"uid": canceller} (issue 19; "{}" before it).
inline constexpr char kCancelRequested[] = "cancel_requested";  // {}
inline constexpr char kRequeueRequested[] = "requeue_requested";  // {}: requeue when it ends
inline constexpr char kFinished[] = "finished";      // {state, exit_code, exit_signal, end_time, message}
inline constexpr char kRequeued[] = "requeued";      // {reason}: back to PENDING, requeue_count+1
inline constexpr char kUpdated[] = "updated";        // {time_limit_s?, priority?, nice?, comment?,
                                                     //  partition?, num_nodes?}
inline constexpr char kStepCreated[] = "step_created";  // {step_id}: next_step_id = step_id + 1
inline constexpr char kSuspended[] = "suspended";    // {}: RUNNING -> SUSPENDED
inline constexpr char kResumed[] = "resumed";        // {}: SUSPENDED -> RUNNING
inline constexpr char kReason[] = "reason";          // {reason}: pending reason changed (not persisted)
// {node, run, state, exit_code, exit_signal, message}: a node reported the end of a run that is
// not the job's current one (an earlier run, killed after a requeue): recorded, changes nothing.
inline constexpr char kStaleReport[] = "stale_report";
// {node, gpu, xid, reason, policy}: a GPU the running job holds failed (issue 14); recorded, the
// record does not change (the policy's requeue_requested / finished events follow).
inline constexpr char kGpuFailure[] = "gpu_failure";
// --- issue 16 §4 preemption (preempt helper; ctld/preemption.h): recorded; the record changes
// only by preempt_kill_at (the requeue_requested / suspended events that follow do the rest).
// {by, mode, grace_time}: this running job is preempted for pending job `by` (CANCEL/REQUEUE:
// preempt_kill_at = event time + grace_time).
inline constexpr char kPreempted[] = "preempted";
// {victims: [ids], mode: [modes]}: this pending job preempts those jobs.
inline constexpr char kPreempting[] = "preempting";
}  // namespace event

// The bulky part of a submission, kept only in the database (not in memory) until launch:
// pending jobs then cost a few hundred bytes of controller memory each.
struct JobPayload {
  std::string script;
  std::string env_block;  // common/env_block.h
};

// A job step (trun), as accounting records it.
struct StepRecord {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  std::string name;
  std::string nodelist;
  uint32_t ntasks = 0;
  uint32_t ncpus = 0;
  int state = static_cast<int>(JobState::kRunning);
  int32_t exit_code = 0;
  int32_t exit_signal = 0;
  int64_t start_time = 0;
  int64_t end_time = 0;
  // Issue 19 (h19): the step's usage, a serialized tessera.v1.StepUsage ("" = not gathered).
  std::string usage;
};

// The batch script's step row in job_steps (issue 19; Slurm's SLURM_BATCH_SCRIPT id).
inline constexpr uint32_t kBatchStepId = 0xfffffffb;

struct JobEvent {
  uint64_t seq = 0;
  uint64_t job_id = 0;
  int64_t time = 0;
  std::string type;
  std::string detail;  // JSON object
};

}  // namespace tessera::ctld
