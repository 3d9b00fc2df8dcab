// Controller: node daemons coming and going: registration (one live stream per node, boot id,
// which jobs a (re)registering node lost or must kill), heartbeats, disconnection, nodes declared
// DOWN and their jobs. Split from controller.cc; same class, same core-thread rule.
#include <algorithm>

#include "ctld/controller.h"
#include "ctld/gpu_failures.h"
#include "ctld/gpu_shares.h"
#include "ctld/log.h"
#include "ctld/nodes/gpu_use.h"

namespace tessera::ctld {
namespace {

bool Contains(const std::vector<uint64_t>& v, uint64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

Status Controller::CheckRegistration(const NodeRuntime& n, const RegisterInfo& info) const {
  if (!n.link) return Status::Ok();
  int64_t silent = clock_->Now() - n.last_heartbeat;
  bool responding = silent <= cfg_->node_timeout_s &&
                    !(n.base == NodeBase::kDown && n.reason == "Not responding");
  if (!responding) return Status::Ok();  // a hung or vanished noded: the new one replaces it
  return Status(Code::kAlreadyExists,
                "node " + info.node + " is already registered and responding (last heartbeat " +
                    std::to_string(silent) + " s ago, boot id " +
                    (n.boot_id.empty() ? std::string("unknown") : n.boot_id) +
                    "); a second registration is refused while its stream is alive");
}

void Controller::ReconcileRegisteredJobs(const RegisterInfo& info, bool rebooted,
                                         RegisterReply* reply) {
  auto reported_run = [&](uint64_t id) {
    auto it = info.runs.find(id);
    return it == info.runs.end() ? uint64_t{0} : it->second;
  };
  auto reports = [&](const JobRecord& j) {  // the node runs (or ended) this job's current run
    if (rebooted) return false;
    if (Contains(info.running, j.job_id) && SameRun(reported_run(j.job_id), j.run)) return true;
    return std::any_of(info.finished.begin(), info.finished.end(), [&](const auto& f) {
      return f.job_id == j.job_id && SameRun(f.run, j.run);
    });
  };
  // Jobs we think run on this node (batch host) but the node does not report.
  std::vector<uint64_t> lost;
  for (auto& [id, j] : jobs_.jobs()) {
    bool active = j.State() == JobState::kRunning || j.State() == JobState::kSuspended;
    if (!active || j.alloc.empty() || j.alloc.front().node != info.node) continue;
    if (!reports(j)) lost.push_back(id);
  }
  for (uint64_t id : lost) {
    JobRecord* j = jobs_.Find(id);
    if (!j) continue;
    Log("job " + std::to_string(id) + " (run " + std::to_string(j->run) + ") was running on " +
        info.node + " but the node does not report it" + (rebooted ? " (the host rebooted)" : ""));
    if ((j->spec.requeue || j->requeue_requested) && !j->cancel_requested) {
      nodes_.Release(*j);
      jobs_.MarkRequeued(id, "NodeFail", nullptr);
    } else {
      FinishJob(*j, JobState::kNodeFail, 0, 0, 0, "job lost by node " + info.node, nullptr);
    }
  }
  // Jobs (runs) the node runs that we do not think run there: kill them. So are the runs of
  // jobs cancelled or requeued while the node was not connected (Requeue, StopCancelledJob):
  // their end, reported as usual, finishes or requeues them.
  for (uint64_t id : info.running) {
    JobRecord* j = jobs_.Find(id);
    bool active = j && (j->State() == JobState::kRunning || j->State() == JobState::kSuspended);
    bool ours = active && !j->alloc.empty() && j->alloc.front().node == info.node &&
                SameRun(reported_run(id), j->run);
    if (!ours || j->cancel_requested || j->requeue_requested) reply->kill_jobs.push_back(id);
  }
}

// Issue 19: scontrol show node's CPULoad= and FreeMem= (memory only, refreshed by heartbeats).
void Controller::OnNodeLoad(const std::string& node, int32_t cpu_load_x100, uint64_t free_mem_mib) {
  NodeRuntime* n = nodes_.Find(node);
  if (!n) return;
  n->cpu_load_x100 = cpu_load_x100;
  n->free_mem_mib = free_mem_mib;
}

Result<RegisterReply> Controller::OnRegister(const RegisterInfo& info, std::shared_ptr<NodeLink> link) {
  NodeRuntime* n = nodes_.Find(info.node);
  if (!n) return NotFound("node " + info.node + " is not in the controller's configuration");
  if (Status st = CheckRegistration(*n, info); !st.ok()) {
    n->link->Probe();  // a dead connection nobody noticed yet ends here; a live one stays
    return st;
  }
  if (n->link) {
    Log("node " + info.node + " stopped responding; its new registration replaces the old stream");
    n->link->Disconnect();
  }
  // Another boot id than before: the host rebooted and every job it ran is gone.
  bool rebooted = !n->boot_id.empty() && !info.boot_id.empty() && n->boot_id != info.boot_id;
  if (rebooted)
    Log("node " + info.node + " rebooted (boot id " + n->boot_id + " -> " + info.boot_id +
        "): its jobs are lost");
  n->boot_id = info.boot_id;
  n->link = std::move(link);
  n->last_heartbeat = clock_->Now();
  n->boot_time = info.boot_time;
  n->reported_cpus = info.cpus;
  n->reported_mem = info.mem_mib;
  n->version = info.version;
  n->os = info.os;  // issue 19
  n->arch = info.arch;
  std::vector<GpuState> gpus_before = std::move(n->gpus);
  n->gpus = info.gpus;
  if (auto d = cfg_->gpus.find(info.node); d != cfg_->gpus.end()) ApplyConfiguredShares(n->gpus, d->second);
  ApplyMigUse(*n);
  n->hcas = info.hcas;
  if (n->base == NodeBase::kUnknown || (n->base == NodeBase::kDown && n->reason == "Not responding")) {
    bool was_down = n->base == NodeBase::kDown;
    n->base = NodeBase::kUp;
    if (!n->drain) n->reason.clear();
    if (was_down && !n->drain) RecordNodeState(*n);  // the durable "Not responding" is over
  }
  if (info.cpus < n->config->cpus)
    Log("node " + info.node + " reports " + std::to_string(info.cpus) + " CPUs, fewer than the " +
        std::to_string(n->config->cpus) + " configured; scheduling uses the configured value");
  RegisterReply reply;
  reply.heartbeat_interval_s = cfg_->HeartbeatInterval();
  auto gpu_failures = CheckRegisteredGpus(*n, &reply, gpus_before);
  ReconcileRegisteredJobs(info, rebooted, &reply);
  for (const auto& f : info.finished) OnJobFinished(info.node, f);
  for (const auto& g : gpu_failures) OnGpuFailure(*n, g, XidOfReason(g.health_reason));
  Log("node " + info.node + " registered (" + std::to_string(info.running.size()) + " running, " +
      std::to_string(info.finished.size()) + " finished to report" +
      (info.boot_id.empty() ? std::string() : ", boot id " + info.boot_id) + ")");
  RequestSchedule();
  return reply;
}

void Controller::OnHeartbeat(const std::string& node, const std::vector<uint64_t>& running,
                             const std::map<uint64_t, uint64_t>& runs) {
  NodeRuntime* n = nodes_.Find(node);
  if (!n) return;
  n->last_heartbeat = clock_->Now();
  // A job (run) the node still runs but that no longer runs there for us (its node was declared
  // dead and the job requeued or failed meanwhile, or it was requeued and started again) is
  // stale: stop that run.
  for (uint64_t id : running) {
    auto r = runs.find(id);
    uint64_t run = r == runs.end() ? 0 : r->second;
    JobRecord* j = jobs_.Find(id);
    bool ours = j && (j->State() == JobState::kRunning || j->State() == JobState::kSuspended) &&
                !j->alloc.empty() && j->alloc.front().node == node && SameRun(run, j->run);
    if (!ours && n->link) {
      Log("node " + node + " still runs job " + std::to_string(id) + " (run " +
          std::to_string(run) + ") which is not running there; cancelling it");
      n->link->Signal(id, 0, run);
    }
  }
  if (n->base == NodeBase::kDown && n->reason == "Not responding" && n->link) {
    n->base = NodeBase::kUp;
    n->reason.clear();
    if (!n->drain) RecordNodeState(*n);
    RequestSchedule();
  }
}

void Controller::OnDisconnect(const std::string& node, const NodeLink* link) {
  NodeRuntime* n = nodes_.Find(node);
  if (n && n->link.get() == link) {
    n->link.reset();
    Log("node " + node + " disconnected");
  }
}

void Controller::FailNodeJobs(NodeRuntime& n, const std::string& why) {
  std::vector<uint64_t> ids = n.jobs;
  for (uint64_t id : ids) {
    JobRecord* j = jobs_.Find(id);
    if (!j || IsFinished(j->State())) continue;
    if (j->cancel_requested) {
      FinishJob(*j, JobState::kCancelled, 0, 0, 0, why, nullptr);
    } else if (j->spec.requeue || j->requeue_requested) {
      nodes_.Release(*j);
      jobs_.MarkRequeued(id, "NodeFail", nullptr);
    } else {
      FinishJob(*j, JobState::kNodeFail, 0, 0, 0, why, nullptr);
    }
  }
}

void Controller::CheckNodes() {
  int64_t now = clock_->Now();
  for (auto& [name, n] : nodes_.nodes()) {
    if (n.base == NodeBase::kDown) continue;
    if (now - n.last_heartbeat <= cfg_->node_timeout_s) continue;
    Log("node " + name + " not responding for " + std::to_string(now - n.last_heartbeat) + " s: DOWN");
    n.base = NodeBase::kDown;
    n.reason = "Not responding";
    n.reason_time = now;
    n.reason_uid = self_uid_;
    // A drained node keeps its administrator's row (the reason they gave, after a restart).
    if (!n.drain) RecordNodeState(n);
    FailNodeJobs(n, "node " + name + " not responding");
  }
}

void Controller::RecordNodeState(const NodeRuntime& n) {
  bool down = n.base == NodeBase::kDown;
  NodeStateRow row{n.config->name, n.drain, down, "", 0};
  if (n.drain || down) row = {n.config->name, n.drain, down, n.reason, n.reason_time, n.reason_uid};
  Batch b;
  b.PutNodeState(row);
  store_->Commit(std::move(b), [name = n.config->name](const Status& st) {
    if (!st.ok()) Log("node " + name + ": its state not recorded: " + st.message());
  });
}

}  // namespace tessera::ctld
