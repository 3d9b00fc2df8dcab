#include "ctld/jobs/job_manager.h"

#include <algorithm>
#include <set>

#include "common/array_spec.h"
#include "common/env_block.h"
#include "common/filename_pattern.h"
#include "common/hostlist.h"

namespace tessera::ctld {

void JobManager::Recover(const Recovered& rec, std::vector<JobRecord> finished) {
  jobs_.clear();
  for (auto& r : finished)
    if (IsFinished(r.State())) jobs_[r.job_id] = std::move(r);
  for (const auto& r : rec.active_jobs) jobs_[r.job_id] = r;
  Reindex();
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

void JobManager::Install(JobRecord& r, JobRecord next) {
  bool was_finished = IsFinished(r.State());
  r = std::move(next);
  if (was_finished && !IsFinished(r.State())) {  // requeue of a finished job: active again
    auto at = std::lower_bound(active_.begin(), active_.end(), r.job_id,
                               [](const JobRecord* a, uint64_t v) { return a->job_id < v; });
    if (at == active_.end() || (*at)->job_id != r.job_id) active_.insert(at, &r);
  }
}

void JobManager::Transition(JobRecord& r, const char* type, const std::string& detail, Batch* b) {
  JobEvent e{++seq_, r.job_id, clock_->Now(), type, detail};
  auto next = Apply(r, e);
  if (next.ok()) Install(r, std::move(*next));
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

namespace {

// SLURM_ARRAY_TASK_STEP as Slurm sets it: the number after the first ':' of --array ("0-20:2"
// -> 2), else 1.
std::string ArrayTaskStep(const std::string& array) {
  size_t colon = array.find(':');
  if (colon == std::string::npos) return "1";
  size_t end = array.find_first_not_of("0123456789", colon + 1);
  std::string n = array.substr(colon + 1, end == std::string::npos ? std::string::npos : end - colon - 1);
  return n.empty() || n.size() > 9 ? "1" : std::to_string(std::stoul(n));
}

// The element-specific part of an array element: ids, output names and SLURM_ARRAY_* variables.
void MakeElement(JobRecord& r, JobPayload& p, uint64_t array_id, uint32_t index, const ArraySpec& a) {
  r.array_job_id = array_id;
  r.array_task_id = index;
  r.array_max_running = a.max_running;
  r.spec.stdout_pattern = ExpandArrayCodes(r.spec.stdout_pattern, array_id, index);
  if (!r.spec.stderr_pattern.empty())
    r.spec.stderr_pattern = ExpandArrayCodes(r.spec.stderr_pattern, array_id, index);
  const std::pair<const char*, std::string> vars[] = {
      {"ARRAY_JOB_ID", std::to_string(array_id)},
      {"ARRAY_TASK_ID", std::to_string(index)},
      {"ARRAY_TASK_COUNT", std::to_string(a.indices.size())},
      {"ARRAY_TASK_MIN", std::to_string(a.indices.front())},
      {"ARRAY_TASK_MAX", std::to_string(a.indices.back())},
      {"ARRAY_TASK_STEP", ArrayTaskStep(r.spec.array)},  // issue 19
  };
  for (const auto& [k, v] : vars) {
    EnvBlockSet(&p.env_block, std::string("SLURM_") + k, v);
    EnvBlockSet(&p.env_block, std::string("TESSERA_") + k, v);
  }
}

}  // namespace

uint64_t JobManager::Submit(JobRecord draft, std::function<void(Result<uint64_t>)> done,
                            const std::function<void(std::function<void()>)>& post_to_core) {
  ArraySpec array;
  if (!draft.spec.array.empty()) {
    auto a = ParseArraySpec(draft.spec.array);
    if (!a.ok()) {
      done(a.status());
      return 0;
    }
    array = std::move(*a);
  } else {
    array.indices = {0};
  }
  bool is_array = !draft.spec.array.empty();
  Batch b;
  draft.submit_time = clock_->Now();
  draft.eligible_time = draft.submit_time;
  draft.state = static_cast<int>(JobState::kPending);
  // As Slurm: a job with a dependency shows (Dependency) from the start, not only after the
  // next scheduling cycle (cycles under load are at least 10 ms apart).
  draft.reason = draft.spec.hold ? "JobHeldUser" : !draft.spec.dependency.empty() ? "Dependency" : "Priority";
  draft.held = draft.spec.hold;
  JobPayload payload{std::move(draft.spec.script), std::move(draft.spec.env_block)};
  draft.spec.script.clear();
  draft.spec.env_block.clear();
  std::vector<uint64_t> ids;
  for (uint32_t index : array.indices) {
    JobRecord initial = draft;
    initial.job_id = NextId(&b);
    JobPayload p = payload;
    if (is_array) MakeElement(initial, p, ids.empty() ? initial.job_id : ids.front(), index, array);
    b.PutPayload(initial.job_id, std::move(p));
    JobRecord& r = jobs_[initial.job_id];
    if (ordered_.empty() || ordered_.back()->job_id < initial.job_id) {
      ordered_.push_back(&r);  // ids only grow: the usual case
      active_.push_back(&r);
    } else {
      Reindex();
    }
    // Apply(empty, submitted(EncodeRecord(initial))) is `initial` (the codec round-trips every
    // field: job_codec_test), so the record is moved in and its JSON made once for the event and
    // the row.
    std::string json = EncodeRecord(initial);
    r = std::move(initial);
    JobEvent e{++seq_, r.job_id, clock_->Now(), event::kSubmitted, json};
    b.AddEvent(e);
    b.PutJob(r, std::move(json));
    if (listener_) pending_events_.emplace_back(std::move(e), r);
    in_flight_[r.job_id] = true;
    ids.push_back(r.job_id);
  }
  CommitBatch(std::move(b), [this, ids, done = std::move(done), post_to_core](const Status& st) {
    post_to_core([this, ids, st, done] {
      for (uint64_t id : ids) {
        in_flight_.erase(id);
        if (!st.ok()) {  // never acknowledged, never visible
          Unindex(id);
          jobs_.erase(id);
        }
      }
      if (!st.ok()) return done(st);
      done(ids.front());
    });
  });
  return ids.front();
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

Status JobManager::CommitTransitions(const std::vector<Planned>& plans, Batch extra) {
  if (plans.empty()) return Status::Ok();
  Batch b;
  std::vector<std::pair<JobEvent, JobRecord>> next;  // in plan order
  next.reserve(plans.size());                        // (so pointers into it stay valid)
  std::map<uint64_t, const JobRecord*> latest;       // a job planned twice builds on its plan
  uint64_t seq = seq_;
  for (const auto& p : plans) {
    JobRecord* r = Find(p.id);
    if (!r) return NotFound("Invalid job id specified: " + std::to_string(p.id));
    auto it = latest.find(p.id);
    const JobRecord& from = it == latest.end() ? *r : *it->second;
    JobEvent e{++seq, p.id, clock_->Now(), p.type, p.detail};
    auto rec = Apply(from, e);
    if (!rec.ok()) return rec.status();
    b.AddEvent(e);
    if (IsFinished(rec->State())) b.ArchiveJob(*rec);
    else b.PutJob(*rec);
    next.emplace_back(std::move(e), std::move(*rec));
    latest[p.id] = &next.back().second;
  }
  b.Append(std::move(extra));
  // The core thread waits for this one commit: nothing else moves meanwhile, so the records
  // computed above are still the ones to replace.
  TESSERA_RETURN_IF_ERROR(store_->CommitSync(std::move(b)));
  seq_ = seq;
  for (auto& [e, rec] : next) {
    JobRecord& r = *Find(e.job_id);
    Install(r, std::move(rec));
    if (listener_) listener_(e, r);
  }
  return Status::Ok();
}

Status JobManager::Hold(uint64_t id, const Caller& c) { return HoldMany({id}, c, true).front(); }

Status JobManager::Release(uint64_t id, const Caller& c) {
  return HoldMany({id}, c, false).front();
}

std::vector<Status> JobManager::HoldMany(const std::vector<uint64_t>& ids, const Caller& c,
                                         bool hold) {
  std::vector<Status> out(ids.size());
  std::vector<Planned> plans;
  std::vector<size_t> planned;  // index in ids of each plan
  std::set<uint64_t> seen;
  for (size_t i = 0; i < ids.size(); ++i) {
    uint64_t id = ids[i];
    JobRecord* r = Find(id);
    if (!r) out[i] = Missing(id);
    else if (!c.MayControl(*r)) out[i] = NotYours(id);
    else if (r->State() != JobState::kPending)
      out[i] = FailedPrecondition("Job " + std::to_string(id) + " is not pending");
    else if (!hold && !r->held)
      out[i] = FailedPrecondition("Job " + std::to_string(id) + " is not held");
    else if (r->held != hold && seen.insert(id).second) {
      plans.push_back({id, hold ? event::kHeld : event::kReleased, "{}"});
      planned.push_back(i);
    }
  }
  Status st = CommitTransitions(plans);
  for (size_t i : planned) out[i] = st;
  return out;
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
  if (u.set_nice && u.nice < 0 && !c.admin && !c.operator_)
    return PermissionDenied("only operators and administrators may set a negative nice value");
  if ((!u.partition.empty() || u.num_nodes) && r->State() != JobState::kPending)
    return FailedPrecondition("Job " + std::to_string(id) + " is not pending: its partition and node count are fixed");
  return CommitTransitions({{id, event::kUpdated, UpdatedDetail(u)}});
}

Status JobManager::PlanCancel(uint64_t id, const Caller& c, Planned* plan, bool* needs_signal) {
  *needs_signal = false;
  JobRecord* r = Find(id);
  if (!r) return Missing(id);
  if (!c.MayControl(*r)) return NotYours(id);
  if (IsFinished(r->State())) return FailedPrecondition("Job/step already completing or completed");
  if (r->State() == JobState::kPending) {
    *plan = {id, event::kFinished,
             FinishedDetail(JobState::kCancelled, 0, 0, clock_->Now(), "cancelled by uid " + std::to_string(c.uid))};
  } else {
    // Who cancelled (sacct's "CANCELLED by <uid>", issue 19).
    *plan = {id, event::kCancelRequested, "{\"uid\":" + std::to_string(c.uid) + "}"};
    *needs_signal = true;
  }
  return Status::Ok();
}

Status JobManager::Cancel(uint64_t id, const Caller& c, bool* needs_signal) {
  Planned plan;
  TESSERA_RETURN_IF_ERROR(PlanCancel(id, c, &plan, needs_signal));
  Status st = CommitTransitions({plan});
  if (!st.ok()) *needs_signal = false;
  return st;
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

void JobManager::RecordStaleReport(uint64_t id, const std::string& detail, Done done) {
  JobRecord* r = Find(id);
  if (!r) {
    if (done) done(Status::Ok());
    return;
  }
  Batch b;
  Transition(*r, event::kStaleReport, detail, &b);
  CommitBatch(std::move(b), std::move(done));
}

void JobManager::MarkRequeued(uint64_t id, const std::string& reason, Done done) {
  JobRecord* r = Find(id);
  if (!r) return;
  Batch b;
  Transition(*r, event::kRequeued, RequeuedDetail(reason), &b);
  CommitBatch(std::move(b), std::move(done));
}

Result<uint32_t> JobManager::AddStep(uint64_t id, StepRecord step) {
  JobRecord* r = Find(id);
  if (!r) return NotFound("Invalid job id specified: " + std::to_string(id));
  step.step_id = r->next_step_id;
  Batch row;
  row.PutStep(step);
  TESSERA_RETURN_IF_ERROR(CommitTransitions(
      {{id, event::kStepCreated, "{\"step_id\":" + std::to_string(step.step_id) + "}"}}, std::move(row)));
  return step.step_id;
}

Status JobManager::FinishStepDurably(const StepRecord& step) {
  Batch b;
  b.PutStep(step);
  return store_->CommitSync(std::move(b));
}

void JobManager::FinishStep(const StepRecord& step) {
  Batch b;
  b.PutStep(step);
  CommitBatch(std::move(b), nullptr);
}

Status JobManager::MarkSuspended(uint64_t id, bool suspended) {
  return CommitTransitions({{id, suspended ? event::kSuspended : event::kResumed, "{}"}});
}

void JobManager::Restore(const JobRecord& before) {
  if (JobRecord* r = Find(before.job_id)) Install(*r, before);
}

void JobManager::SetReason(uint64_t id, const std::string& reason, int64_t expected_start,
                           const std::vector<std::string>& sched_nodes) {
  JobRecord* r = Find(id);
  if (!r || r->State() != JobState::kPending) return;
  r->expected_start = expected_start;
  r->sched_nodes = sched_nodes.empty() ? std::string() : CompressHostlist(sched_nodes);
  if (!r->held) r->reason = reason;
}

void JobManager::PurgeFinished(int64_t min_age_s) {
  int64_t now = clock_->Now();
  bool purged = false;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (IsFinished(it->second.State()) && it->second.end_time + min_age_s <= now && !in_flight_.count(it->first)) {
      it = jobs_.erase(it);
      purged = true;
    } else {
      ++it;
    }
  }
  if (purged) Reindex();
}

void JobManager::Reindex() {
  ordered_.clear();
  ordered_.reserve(jobs_.size());
  active_.clear();
  for (const auto& [id, r] : jobs_) {
    ordered_.push_back(&r);
    if (!IsFinished(r.State())) active_.push_back(&r);
  }
}

const std::vector<const JobRecord*>& JobManager::active() {
  std::erase_if(active_, [](const JobRecord* r) { return IsFinished(r->State()); });
  return active_;
}

void JobManager::Unindex(uint64_t id) {
  auto by_id = [](const JobRecord* r, uint64_t v) { return r->job_id < v; };
  for (auto* index : {&ordered_, &active_}) {
    auto it = std::lower_bound(index->begin(), index->end(), id, by_id);
    if (it != index->end() && (*it)->job_id == id) index->erase(it);
  }
}

}  // namespace tessera::ctld
