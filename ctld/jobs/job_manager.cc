#include "ctld/jobs/job_manager.h"

#include <algorithm>

namespace tessera::ctld {

void JobManager::Recover(const Recovered& rec) {
  jobs_.clear();
  for (const auto& r : rec.active_jobs) jobs_[r.job_id] = r;
  next_id_ = std::max<uint64_t>({rec.max_job_id + 1, rec.reserved_job_id, 1});
  reserved_ = next_id_;  // force a fresh durable reservation before the next id is handed out
  seq_ = rec.max_event_seq;
}

uint64_t JobManager::NextId(Batch* b) {
  if (next_id_ >= reserved_) {
    reserved_ = next_id_ + kIdBlock;
    b->SetMeta("job_id_reserved", std::to_string(reserved_));
  }
  return next_id_++;
}

void JobManager::Transition(JobRecord& r, const char* type, const std::string& detail, Batch* b) {
  JobEvent e{++seq_, r.job_id, clock_->Now(), type, detail};
  auto next = Apply(r, e);
  if (next.ok()) r = std::move(*next);
  b->AddEvent(e);
  if (IsFinished(r.State())) {
    b->ArchiveJob(r);
  } else {
    b->PutJob(r);
  }
  if (listener_) pending_events_.emplace_back(e, r);
}

void JobManager::CommitBatch(Batch b, Done done) {
  auto events = std::move(pending_events_);
  pending_events_.clear();
  auto listener = listener_;
  store_->Commit(std::move(b), [events = std::move(events), listener, done = std::move(done)](const Status& st) {
    if (st.ok() && listener)
      for (const auto& [e, r] : events) listener(e, r);
    if (done) done(st);
  });
}

uint64_t JobManager::Submit(JobRecord draft, std::function<void(Result<uint64_t>)> done,
                            const std::function<void(std::function<void()>)>& post_to_core) {
  Batch b;
  draft.job_id = NextId(&b);
  draft.submit_time = clock_->Now();
  draft.eligible_time = draft.submit_time;
  draft.state = static_cast<int>(JobState::kPending);
  draft.reason = draft.spec.hold ? "JobHeldUser" : "Priority";
  draft.held = draft.spec.hold;
  JobPayload payload{std::move(draft.spec.script), std::move(draft.spec.env)};
  draft.spec.script.clear();
  draft.spec.env.clear();
  b.PutPayload(draft.job_id, payload);
  JobRecord initial = draft;
  JobRecord& r = jobs_[draft.job_id];
  r.job_id = draft.job_id;
  Transition(r, event::kSubmitted, EncodeRecord(initial), &b);
  uint64_t id = r.job_id;
  in_flight_[id] = true;
  CommitBatch(std::move(b), [this, id, done = std::move(done), post_to_core](const Status& st) {
    post_to_core([this, id, st, done] {
      in_flight_.erase(id);
      if (!st.ok()) {
        jobs_.erase(id);  // never acknowledged, never visible
        done(st);
        return;
      }
      done(id);
    });
  });
  return id;
}

JobRecord* JobManager::Find(uint64_t id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || in_flight_.count(id)) return nullptr;
  return &it->second;
}

namespace {
Status NotYours(uint64_t id) {
  return PermissionDenied("Access/permission denied: job " + std::to_string(id) + " belongs to another user");
}
Status Missing(uint64_t id) { return NotFound("Invalid job id specified: " + std::to_string(id)); }
}  // namespace

Status JobManager::Hold(uint64_t id, const Caller& c) {
  JobRecord* r = Find(id);
  if (!r) return Missing(id);
  if (!c.MayControl(*r)) return NotYours(id);
  if (r->State() != JobState::kPending) return FailedPrecondition("Job " + std::to_string(id) + " is not pending");
  if (r->held) return Status::Ok();
  Batch b;
  Transition(*r, event::kHeld, "{}", &b);
  CommitBatch(std::move(b), nullptr);
  return Status::Ok();
}

Status JobManager::Release(uint64_t id, const Caller& c) {
  JobRecord* r = Find(id);
  if (!r) return Missing(id);
  if (!c.MayControl(*r)) return NotYours(id);
  if (r->State() != JobState::kPending || !r->held) return FailedPrecondition("Job " + std::to_string(id) + " is not held");
  Batch b;
  Transition(*r, event::kReleased, "{}", &b);
  CommitBatch(std::move(b), nullptr);
  return Status::Ok();
}

Status JobManager::Update(uint64_t id, const Caller& c, const JobUpdate& u) {
  JobRecord* r = Find(id);
  if (!r) return Missing(id);
  if (!c.MayControl(*r)) return NotYours(id);
  if (IsFinished(r->State())) return FailedPrecondition("Job " + std::to_string(id) + " has already finished");
  if (u.priority >= 0 && !c.admin) return PermissionDenied("only administrators may set a job's priority");
  if (u.time_limit_s != 0 && !c.admin) {
    bool raise = u.time_limit_s < 0 || (r->time_limit_s >= 0 && u.time_limit_s > r->time_limit_s);
    if (raise) return PermissionDenied("only administrators may increase a job's time limit");
  }
  if (u.set_nice && u.nice < 0 && !c.admin) return PermissionDenied("only administrators may set a negative nice value");
  Batch b;
  Transition(*r, event::kUpdated, UpdatedDetail(u), &b);
  CommitBatch(std::move(b), nullptr);
  return Status::Ok();
}

Status JobManager::Cancel(uint64_t id, const Caller& c, bool* needs_signal) {
  *needs_signal = false;
  JobRecord* r = Find(id);
  if (!r) return Missing(id);
  if (!c.MayControl(*r)) return NotYours(id);
  if (IsFinished(r->State())) return FailedPrecondition("Job/step already completing or completed");
  Batch b;
  if (r->State() == JobState::kPending) {
    Transition(*r, event::kFinished, FinishedDetail(JobState::kCancelled, 0, 0, clock_->Now(), "cancelled by uid " + std::to_string(c.uid)), &b);
  } else {
    Transition(*r, event::kCancelRequested, "{}", &b);
    *needs_signal = true;
  }
  CommitBatch(std::move(b), nullptr);
  return Status::Ok();
}

void JobManager::MarkStarted(uint64_t id, std::vector<NodeAlloc> alloc, Done done) {
  JobRecord* r = Find(id);
  if (!r) return;
  Batch b;
  Transition(*r, event::kStarted, StartedDetail(alloc, clock_->Now()), &b);
  CommitBatch(std::move(b), std::move(done));
}

void JobManager::MarkFinished(uint64_t id, JobState state, int32_t exit_code, int32_t exit_signal,
                              int64_t end_time, const std::string& message, Done done) {
  JobRecord* r = Find(id);
  if (!r || IsFinished(r->State())) {
    if (done) done(Status::Ok());
    return;
  }
  Batch b;
  Transition(*r, event::kFinished, FinishedDetail(state, exit_code, exit_signal, end_time ? end_time : clock_->Now(), message), &b);
  CommitBatch(std::move(b), std::move(done));
}

void JobManager::MarkRequeued(uint64_t id, const std::string& reason, Done done) {
  JobRecord* r = Find(id);
  if (!r) return;
  Batch b;
  Transition(*r, event::kRequeued, RequeuedDetail(reason), &b);
  CommitBatch(std::move(b), std::move(done));
}

void JobManager::SetReason(uint64_t id, const std::string& reason, int64_t expected_start) {
  JobRecord* r = Find(id);
  if (!r || r->State() != JobState::kPending) return;
  r->expected_start = expected_start;
  if (!r->held) r->reason = reason;
}

void JobManager::PurgeFinished(int64_t min_age_s) {
  int64_t now = clock_->Now();
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (IsFinished(it->second.State()) && it->second.end_time + min_age_s <= now && !in_flight_.count(it->first)) {
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace tessera::ctld
