#pragma once
// The scheduler's output: one Decision per pending job of the snapshot, in snapshot order.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tessera::sched {

struct NodePlacement {
  std::string node;
  uint32_t cpus = 0;
  uint64_t mem_mib = 0;
  std::vector<uint32_t> gpu_indices;  // whole GPUs (node GPU indices)
  uint32_t tasks = 0;
  std::vector<uint32_t> group_tasks;  // tasks of each task group on this node (job's group order)
  std::vector<std::string> mig_uuids; // MIG instances ("MIG-...")
  // GPU sharing (gpu_share.h): share_gpu is the node GPU index whose MPS percent (mps) or
  // time-slice replicas (shards) the job holds; -1 = none. Not part of gpu_indices.
  int64_t share_gpu = -1;
  uint32_t mps = 0;
  uint32_t shards = 0;
};

struct Decision {
  enum class Kind { kStart, kPending };
  Kind kind = Kind::kPending;
  uint64_t job_id = 0;
  std::vector<NodePlacement> placement;  // kStart
  std::string reason;                    // kPending: Slurm vocabulary ("Priority", ...)
  bool backfilled = false;               // kStart by the backfill action
  // kPending with a reservation: when and where the job is expected to start (tqueue --start).
  int64_t expected_start = 0;            // 0 = unknown
  std::vector<std::string> reserved_nodes;
  int64_t priority = 0;                  // the priority the job was ordered by
  // kPending with a reservation held because the job is among the oldest eligible of its
  // partition (SchedulerParameters=bf_oldest, issue 17 §2): reserved ahead of the priority order.
  bool oldest = false;
};

// A MIG layout change the dynamic planner chose (MigStrategy=dynamic): on `node`, GPU
// `gpu_index` (all of whose instances are free) destroys `destroy` then creates `create`
// ((profile, start) pairs valid under common/mig_profiles.h). ctld sends it to the node; the
// jobs it serves start in a later cycle on the new instances.
struct MigReconfig {
  std::string node;
  uint32_t gpu_index = 0;
  std::vector<std::string> destroy;                          // MIG UUIDs
  std::vector<std::pair<std::string, uint32_t>> create;      // (profile, start)
  std::vector<uint64_t> for_jobs;                            // the pending jobs it is made for
};

// --- issue 16 §4 preemption (preempt helper; actions/preempt.cc) ---
// One preemptor and the running jobs preempted for it. Each victim is a whole job (every node
// of it). The preemptor's decision stays kPending (reason Resources, expected_start = now,
// reserved_nodes) until its victims' resources are free; `placement` is where it fits then.
// ctld re-checks every victim (still running, not exempt) before acting.
struct PreemptVictim {
  uint64_t job_id = 0;
  std::string mode;            // "CANCEL", "REQUEUE" or "SUSPEND"
  int64_t grace_time = 0;      // seconds between SIGTERM and SIGKILL (CANCEL, REQUEUE)
};
struct Preemption {
  uint64_t preemptor = 0;
  std::vector<PreemptVictim> victims;  // new victims chosen in this cycle (may be empty when
                                       // earlier victims, still ending, make room)
  std::vector<uint64_t> pending_victims;  // earlier victims still ending (preempted_for)
  std::vector<NodePlacement> placement;   // the preemptor's place once they are gone
  // --- issue 16 §2 queues (h16q): "reclaim" when the reclaim action chose it (an account
  // under its deserved share took back capacity lent to accounts over theirs), "" = preempt.
  std::string cause;
};

// --- issue 16 §2 queues (h16q; queues.h): one account's queue figures in a cycle, in account
// tree order (parents first). CPU count, memory MiB, GPU units; -1 = none (guarantee, limit).
struct QueueTres {
  int64_t cpu = 0, mem = 0, gpu = 0;
};
struct QueueShare {
  std::string account, parent;  // parent "" = top level
  uint32_t depth = 0;           // 0 = top level
  QueueTres guarantee{-1, -1, -1}, limit{-1, -1, -1};
  uint32_t weight = 1;
  bool reclaimable = true;
  QueueTres allocated;          // running jobs of the account and its children (cycle start)
  QueueTres pending;            // eligible pending jobs' requests (demand)
  QueueTres deserved;           // fair share of the moment (queues.h), rounded down
};

struct CycleResult {
  std::vector<Decision> decisions;
  uint64_t jobs_considered = 0;
  uint64_t jobs_started = 0;
  uint64_t jobs_backfilled = 0;
  uint64_t reservations = 0;
  std::vector<MigReconfig> mig_reconfigs;
  std::vector<Preemption> preemptions;  // issue 16 §4 (preempt helper)
  std::vector<QueueShare> queues;       // issue 16 §2: filled when queues are active (queues.h)
  std::vector<std::string> warnings;    // issue 16 §2: e.g. guarantees scaled down (queues.h)
  Status status;  // not OK when the configuration named an action or plugin that cannot run
  // Issue 20 §3 (sdiag, h20a): how deep the actions went. allocate_depth: eligible jobs the
  // allocate action examined (not passed over behind a blocked one). Backfill (when it ran):
  // the jobs of its queue, those it looked at, those it tried to place now, and its run time
  // (measured only when RunCycle is given a clock; 0 otherwise).
  uint64_t allocate_depth = 0;
  bool backfill_ran = false;
  uint64_t backfill_queue = 0, backfill_depth = 0, backfill_depth_try = 0;
  int64_t backfill_us = 0;
};

}  // namespace tessera::sched
