#pragma once
// Owns every job the controller knows: the in-memory table, id allocation and all transitions.
// Core thread only. Every transition builds a JobEvent, applies it with the pure Apply(), and
// puts event + record in one store Batch, so memory and disk move together. Jobs become visible
// to the scheduler only once their submission is durable.
//
// Two kinds of transitions:
//  - acknowledged changes (Hold, Release, Update, Cancel, CommitTransitions: what users and
//    admins ask for) are durable before they are visible: the next record is computed on a
//    copy, the batch committed (the core thread waits for that one commit), and only on success
//    is memory changed and the listener told. On failure memory is unchanged and the store's
//    error ("state database write failed: <cause>") is returned, for the RPC to answer.
//  - internal ones (MarkStarted, MarkFinished, MarkRequeued, ...) change memory at once and
//    commit in the background (group commit); their `done` runs after the commit, and whatever
//    they trigger outside (a launch, a FinishedAck to the node) waits for it.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "ctld/jobs/job.h"
#include "ctld/jobs/job_codec.h"
#include "ctld/state/store.h"

namespace tessera::ctld {

struct Caller {
  uint32_t uid = 0;
  uint32_t gid = 0;
  bool admin = false;     // root, TesseraAdmins
  bool operator_ = false; // TesseraOperators (job control on any job)
  std::string origin;     // munge credentials: the encoding host's IPv4 address ("" = unknown)
  bool MayControl(const JobRecord& j) const { return admin || operator_ || uid == j.uid; }
};

// Receives every committed event (WatchJobs, metrics).
using EventListener = std::function<void(const JobEvent&, const JobRecord&)>;

class JobManager {
 public:
  // How many job ids one durable reservation covers.
  static constexpr uint64_t kIdBlock = 1000;

  JobManager(Store* store, const Clock* clock) : store_(store), clock_(clock) {}

  // Loads recovered state. Must be called before anything else. `finished`: archived jobs that
  // ended less than MinJobAge ago (Store::RecentlyFinished); they are listed again until
  // PurgeFinished drops them, as if the controller had not restarted.
  void Recover(const Recovered& rec, std::vector<JobRecord> finished = {});
  void SetListener(EventListener l) { listener_ = std::move(l); }

  // Queues a validated job; `done` runs on the core (via post_to_core) once durable (or failed)
  // with the job id. `draft` has everything but job_id and submit_time. A draft whose
  // spec.array is set becomes one job per index (consecutive ids; the first id is the array's
  // id, given to `done`), all in one transaction: all are acknowledged or none.
  using Done = std::function<void(const Status&)>;
  uint64_t Submit(JobRecord draft, std::function<void(Result<uint64_t>)> done,
                  const std::function<void(std::function<void()>)>& post_to_core);

  JobRecord* Find(uint64_t id);
  const std::map<uint64_t, JobRecord>& jobs() const { return jobs_; }
  // The same records in id order, as one contiguous array (listing 100k jobs walks this
  // instead of the tree: ListJobs, issue #6). Includes jobs whose submission is not yet durable.
  const std::vector<const JobRecord*>& ordered() const { return ordered_; }
  // The jobs that are not finished, in id order (also not yet durable ones): what a scheduling
  // cycle walks instead of every record (finished ones stay MinJobAge). Drops, on each call,
  // the records that finished since the last one.
  const std::vector<const JobRecord*>& active();
  bool IsDurable(uint64_t id) const { return !in_flight_.count(id); }

  // One acknowledged transition: event `type` with `detail` for job `id`.
  struct Planned {
    uint64_t id = 0;
    const char* type = "";
    std::string detail;
  };
  // Commits the events of `plans` in ONE transaction and waits until it is durable; then puts
  // the new records in memory (in order; a job may appear twice) and tells the listener. On
  // failure nothing changes in memory and the error is returned. Every id must be Find()able.
  // `extra` (e.g. a step row) is written in the same transaction.
  Status CommitTransitions(const std::vector<Planned>& plans, Batch extra = {});
  // Checks that `c` may cancel job `id` and plans it: a pending job ends CANCELLED, a running
  // one gets cancel_requested (*needs_signal: the caller signals its node after the commit).
  Status PlanCancel(uint64_t id, const Caller& c, Planned* plan, bool* needs_signal);

  Status Hold(uint64_t id, const Caller& c);
  Status Release(uint64_t id, const Caller& c);
  // Holds (`hold`) or releases jobs `ids` in one commit, durable before it returns: one status
  // per id (a job that is already as asked is OK; a failed commit fails every planned id).
  std::vector<Status> HoldMany(const std::vector<uint64_t>& ids, const Caller& c, bool hold);
  Status Update(uint64_t id, const Caller& c, const JobUpdate& u);
  // Marks a pending job cancelled (final). For a running job records the request; the caller
  // must signal the node and finish the job when it reports.
  Status Cancel(uint64_t id, const Caller& c, bool* needs_signal);

  // Transitions driven by the scheduler and node daemons. Each commits its batch; `done` (may be
  // empty) runs on the store thread after the commit.
  void MarkStarted(uint64_t id, std::vector<NodeAlloc> alloc, Done done);
  // end_time 0 = now.
  void MarkFinished(uint64_t id, JobState state, int32_t exit_code, int32_t exit_signal,
                    int64_t end_time, const std::string& message, Done done);
  // Allocates the job's next step id and records the step (accounting), durably before it
  // returns (the caller grants the step to nodes only then).
  Result<uint32_t> AddStep(uint64_t id, StepRecord step);
  // Records a step's end.
  void FinishStep(const StepRecord& step);
  // The same, durable before it returns (CompleteStep answers only then).
  Status FinishStepDurably(const StepRecord& step);
  // RUNNING <-> SUSPENDED, durably (an acknowledged change; the caller signals the node after).
  Status MarkSuspended(uint64_t id, bool suspended);
  // Requeue (node failure of a requeueable job, or user request): back to PENDING.
  void MarkRequeued(uint64_t id, const std::string& reason, Done done);
  // Puts `before` back in memory as the job's record (a transition whose commit failed and
  // that nothing outside has acted on). Memory only: the disk never had the failed change.
  void Restore(const JobRecord& before);
  // Records (durably, as event::kStaleReport) a node's report of a run that is not the job's
  // current one; the job does not change. `done` as for the transitions above.
  void RecordStaleReport(uint64_t id, const std::string& detail, Done done);
  // Pending reason (memory only: reasons are recomputed every cycle).
  void SetReason(uint64_t id, const std::string& reason, int64_t expected_start = 0,
                 const std::vector<std::string>& sched_nodes = {});

  // Drops finished jobs older than `min_age_s` from memory (they stay in accounting).
  void PurgeFinished(int64_t min_age_s);
  uint64_t last_seq() const { return seq_; }
  // The id the next submitted job gets (sbatch --test-only prints it; issue 19).
  uint64_t PeekNextId() const { return next_id_; }

 private:
  void Transition(JobRecord& r, const char* type, const std::string& detail, Batch* b);
  // Puts `next` in place of job r (keeps the active index right when a job becomes active again).
  void Install(JobRecord& r, JobRecord next);
  void CommitBatch(Batch b, Done done);
  uint64_t NextId(Batch* b);
  void Reindex();  // rebuilds ordered_ and active_ from jobs_
  void Unindex(uint64_t id);

  Store* store_;
  const Clock* clock_;
  EventListener listener_;
  std::map<uint64_t, JobRecord> jobs_;
  std::vector<const JobRecord*> ordered_;  // jobs_ in id order (map nodes do not move)
  std::vector<const JobRecord*> active_;   // not finished (plus some finished since active())
  std::map<uint64_t, bool> in_flight_;  // submitted, not yet durable
  std::vector<std::pair<JobEvent, JobRecord>> pending_events_;
  uint64_t next_id_ = 1;
  uint64_t reserved_ = 0;  // ids below this are covered by a durable (or queued) reservation
  uint64_t seq_ = 0;
};

}  // namespace tessera::ctld
