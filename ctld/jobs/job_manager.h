#pragma once
// Owns every job the controller knows: the in-memory table, id allocation and all transitions.
// Core thread only. Every transition goes through Transition(): it builds a JobEvent, applies
// it with the pure Apply(), and adds event + record to one store Batch, so memory and disk move
// together. Jobs become visible to the scheduler only once their submission is durable.
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

  Status Hold(uint64_t id, const Caller& c);
  Status Release(uint64_t id, const Caller& c);
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
  // Allocates the job's next step id and records the step (accounting) durably.
  uint32_t AddStep(uint64_t id, StepRecord step);
  // Records a step's end.
  void FinishStep(const StepRecord& step);
  // RUNNING <-> SUSPENDED (the caller signals the node).
  void MarkSuspended(uint64_t id, bool suspended);
  // Requeue (node failure of a requeueable job, or user request): back to PENDING.
  void MarkRequeued(uint64_t id, const std::string& reason, Done done);
  // Records (durably, as event::kStaleReport) a node's report of a run that is not the job's
  // current one; the job does not change. `done` as for the transitions above.
  void RecordStaleReport(uint64_t id, const std::string& detail, Done done);
  // Pending reason (memory only: reasons are recomputed every cycle).
  void SetReason(uint64_t id, const std::string& reason, int64_t expected_start = 0);

  // Drops finished jobs older than `min_age_s` from memory (they stay in accounting).
  void PurgeFinished(int64_t min_age_s);
  uint64_t last_seq() const { return seq_; }

 private:
  void Transition(JobRecord& r, const char* type, const std::string& detail, Batch* b);
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
