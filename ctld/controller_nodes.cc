// Controller: node registration rules (one live stream per node, boot id, which jobs a
// (re)registering node lost). Split from controller.cc; same class, same core-thread rule.
#include <algorithm>

#include "ctld/controller.h"
#include "ctld/log.h"

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

}  // namespace tessera::ctld
