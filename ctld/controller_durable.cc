// Controller: the acknowledged changes that are durable before they are applied or answered
// (cancel, node drain/down/resume), and the undoing of internal transitions whose commit failed
// (hardening, part 3). The rest of Controller is in controller.cc.
#include <set>

#include "common/hostlist.h"
#include "ctld/controller.h"
#include "ctld/metrics/ctld_metrics.h"
#include "ctld/log.h"

namespace tessera::ctld {

Status Controller::SignalJob(uint64_t id, const Caller& c, int signal) {
  JobRecord* j = jobs_.Find(id);
  if (!j) return NotFound("Invalid job id specified: " + std::to_string(id));
  if (!c.MayControl(*j))
    return PermissionDenied("Access/permission denied: job " + std::to_string(id) +
                            " belongs to another user");
  if (j->State() != JobState::kRunning)
    return FailedPrecondition("Job " + std::to_string(id) + " is not running");
  NodeRuntime* n = nodes_.Find(j->alloc.front().node);
  if (!n || !n->link) return Unavailable("node " + j->alloc.front().node + " is not connected");
  SendToNode(*n, id, signal);
  return Status::Ok();
}

std::vector<Status> Controller::CancelMany(const std::vector<uint64_t>& ids, const Caller& c,
                                           int signal) {
  std::vector<Status> out(ids.size());
  if (signal != 0) {  // a signal changes no state
    for (size_t i = 0; i < ids.size(); ++i) out[i] = SignalJob(ids[i], c, signal);
    return out;
  }
  std::vector<JobManager::Planned> plans;
  std::vector<size_t> planned;  // indices into ids
  std::vector<bool> needs_signal(ids.size(), false);
  std::set<uint64_t> seen;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!seen.insert(ids[i]).second) {
      out[i] = FailedPrecondition("Job/step already completing or completed");
      continue;
    }
    JobManager::Planned p;
    bool sig = false;
    out[i] = jobs_.PlanCancel(ids[i], c, &p, &sig);
    if (!out[i].ok()) continue;
    plans.push_back(std::move(p));
    planned.push_back(i);
    needs_signal[i] = sig;
  }
  // One commit for all of them; nothing is acknowledged (or signalled) before it is durable.
  Status st = jobs_.CommitTransitions(plans);
  for (size_t i : planned) {
    if (!st.ok()) {
      out[i] = st;
    } else if (!needs_signal[i]) {
      stats_.jobs_cancelled++;
      const JobRecord* j = metrics_ ? jobs_.Find(ids[i]) : nullptr;  // issue 20 §3
      if (j) metrics_->JobFinished(j->partition, JobStateName(JobState::kCancelled));
    } else {
      StopCancelledJob(ids[i]);
    }
  }
  return out;
}

void Controller::StopCancelledJob(uint64_t id) {
  JobRecord* j = jobs_.Find(id);
  if (!j || j->alloc.empty()) return;
  NodeRuntime* n = nodes_.Find(j->alloc.front().node);
  if (n && n->link) {
    SendToNode(*n, id, 0);
  } else if (!MayStillRun(n)) {  // nothing runs there any more
    FinishJob(*j, JobState::kCancelled, 0, 0, 0, "cancelled while its node was down", nullptr);
  }  // else: cancelled when the node reports the run's end (ReconcileRegisteredJobs kills it)
}

namespace {
// Set DOWN by an administrator (not by the node timeout, which the node's return undoes).
bool AdminDown(const NodeRuntime& n) {
  return n.base == NodeBase::kDown && n.reason != "Not responding";
}
}  // namespace

Status Controller::UpdateNode(const std::string& expr, const std::string& action,
                              const std::string& reason, int64_t uid) {
  auto names = ExpandHostlist(expr);
  if (!names.ok()) return names.status();
  for (const auto& name : *names)
    if (!nodes_.Find(name)) return NotFound("Invalid node name specified: " + name);
  if ((action == "DRAIN" || action == "DOWN") && reason.empty())
    return InvalidArgument("a Reason= is required to drain or down a node");
  if (action != "DRAIN" && action != "RESUME" && action != "DOWN")
    return InvalidArgument("unknown node action " + action);
  // Durable before it is applied or acknowledged: a drained node stays drained after a restart.
  Batch b;
  int64_t now = clock_->Now();
  for (const auto& name : *names) {
    const NodeRuntime* n = nodes_.Find(name);
    NodeStateRow row{name, false, false, "", 0};
    if (action == "DRAIN") row = {name, true, AdminDown(*n), reason, now, uid};
    if (action == "DOWN") row = {name, n->drain, true, reason, now, uid};
    b.PutNodeState(row);
    if (action == "RESUME")  // an admin resume also returns the node's drained GPUs (issue 14)
      for (auto it = gpu_drains_.lower_bound({name, 0});
           it != gpu_drains_.end() && it->first.first == name; ++it)
        b.DeleteGpuDrain(name, it->first.second);
  }
  TESSERA_RETURN_IF_ERROR(store_->CommitSync(std::move(b)));
  for (const auto& name : *names) {
    NodeRuntime* n = nodes_.Find(name);
    if (action == "DRAIN") {
      n->drain = true;
      n->reason = reason;
      n->reason_time = now;
      n->reason_uid = uid;
    } else if (action == "RESUME") {
      n->drain = false;
      n->reason.clear();
      for (auto& g : n->gpus) {  // an admin resume also returns drained GPUs
        if (!g.healthy)
          Log("node " + name + " GPU " + std::to_string(g.index) + " resumed by an administrator");
        if (!g.healthy && n->link) n->link->SetGpuDrain(g.index, false, "");
        g.healthy = true;
        g.health_reason.clear();
        gpu_drains_.erase({name, g.index});
      }
      for (auto it = gpu_drains_.lower_bound({name, 0});
           it != gpu_drains_.end() && it->first.first == name;)
        it = gpu_drains_.erase(it);
      if (n->base == NodeBase::kDown && n->link) n->base = NodeBase::kUp;
    } else {
      n->base = NodeBase::kDown;
      n->reason = reason;
      n->reason_time = now;
      n->reason_uid = uid;
      FailNodeJobs(*n, "node set DOWN: " + reason);
    }
  }
  RequestSchedule();
  return Status::Ok();
}

void Controller::UndoFinish(const JobRecord& before, bool was_running) {
  JobRecord* j = jobs_.Find(before.job_id);
  if (!j || !IsFinished(j->State()) || j->requeue_count != before.requeue_count) return;
  jobs_.Restore(before);
  if (was_running) nodes_.Allocate(*j);
  Log("job " + std::to_string(before.job_id) + ": its end could not be recorded; kept as it was");
}

void Controller::UndoStart(const JobRecord& before) {
  JobRecord* j = jobs_.Find(before.job_id);
  if (!j || j->State() != JobState::kRunning || j->requeue_count != before.requeue_count) return;
  nodes_.Release(*j);
  jobs_.Restore(before);
  Log("job " + std::to_string(before.job_id) + ": its start could not be recorded; pending again");
}

}  // namespace tessera::ctld
