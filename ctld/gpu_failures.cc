#include "ctld/gpu_failures.h"

#include <algorithm>
#include <cctype>

#include <boost/json.hpp>

#include "ctld/controller.h"
#include "ctld/log.h"

namespace tessera::ctld {

std::vector<uint64_t> JobsHoldingGpu(const std::vector<const JobRecord*>& jobs,
                                     const std::string& node, uint32_t gpu,
                                     const std::vector<std::string>& mig_uuids) {
  std::vector<uint64_t> out;
  for (const JobRecord* j : jobs) {
    if (j->State() != JobState::kRunning && j->State() != JobState::kSuspended) continue;
    bool holds = false;
    for (const auto& a : j->alloc) {
      if (a.node != node) continue;
      holds = holds || std::count(a.gpu_indices.begin(), a.gpu_indices.end(), gpu) > 0;
      for (const auto& u : a.mig_uuids)
        holds = holds || std::count(mig_uuids.begin(), mig_uuids.end(), u) > 0;
    }
    if (holds) out.push_back(j->job_id);
  }
  return out;
}

std::string GpuFailureMessage(const std::string& node, uint32_t gpu, uint32_t xid,
                              const std::string& reason) {
  std::string what = reason;
  if (xid && reason.rfind("XID", 0) != 0) what = "XID " + std::to_string(xid) + ": " + reason;
  return "GPU " + std::to_string(gpu) + " of node " + node + " failed: " + what;
}

std::string GpuFailureDetail(const std::string& node, uint32_t gpu, uint32_t xid,
                             const std::string& reason, const std::string& policy) {
  boost::json::object o;
  o["node"] = node;
  o["gpu"] = gpu;
  o["xid"] = xid;
  o["reason"] = reason;
  o["policy"] = policy;
  return boost::json::serialize(o);
}

std::vector<GpuState> RegisteredGpuFailures(const std::vector<GpuState>& before,
                                            const std::vector<GpuState>& now,
                                            const std::function<bool(uint32_t)>& drained) {
  std::vector<GpuState> out;
  for (const auto& g : now) {
    bool failure = XidOfReason(g.health_reason) > 0 || g.health_reason.rfind("GPU lost", 0) == 0;
    if (!g.healthy && failure && !drained(g.index)) out.push_back(g);
  }
  for (const auto& g : before) {
    bool reported = std::any_of(now.begin(), now.end(),
                                [&](const GpuState& x) { return x.index == g.index; });
    if (reported) continue;
    GpuState lost = g;
    lost.healthy = false;
    lost.health_reason = "GPU lost (not reported by the node at its registration)";
    out.push_back(lost);
  }
  return out;
}

uint32_t XidOfReason(const std::string& reason) {
  if (reason.rfind("XID ", 0) != 0) return 0;
  uint64_t xid = 0;
  for (size_t i = 4; i < reason.size() && i < 14; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(reason[i]))) break;
    xid = xid * 10 + static_cast<uint64_t>(reason[i] - '0');
  }
  return static_cast<uint32_t>(xid);
}

std::string Controller::TakeGpuFailureEnd(uint64_t id, bool* fail) {
  *fail = false;
  auto it = gpu_failure_ends_.find(id);
  if (it == gpu_failure_ends_.end()) return "";
  *fail = it->second.fail;
  std::string m = it->second.message;
  gpu_failure_ends_.erase(it);
  return m;
}

void Controller::OnGpuFailure(NodeRuntime& n, const GpuState& gpu, uint32_t xid) {
  std::vector<std::string> migs;
  for (const auto& m : gpu.mig) migs.push_back(m.uuid);
  const std::string& node = n.config->name;
  std::string msg = GpuFailureMessage(node, gpu.index, xid, gpu.health_reason);
  for (uint64_t id : JobsHoldingGpu(jobs_.active(), node, gpu.index, migs)) {
    JobRecord* j = jobs_.Find(id);
    if (!j || j->cancel_requested || gpu_failure_ends_.count(id)) continue;
    const PartitionConfig* p = cfg_->FindPartition(j->partition);
    GpuFailurePolicy pol = p ? p->gpu_failure_policy : GpuFailurePolicy::kRequeue;
    std::string policy = GpuFailurePolicyName(pol);
    std::vector<JobManager::Planned> plans = {
        {id, event::kGpuFailure, GpuFailureDetail(node, gpu.index, xid, gpu.health_reason, policy)}};
    if (pol == GpuFailurePolicy::kRequeue && !j->requeue_requested)
      plans.push_back({id, event::kRequeueRequested, "{}"});
    Log("job " + std::to_string(id) + ": " + msg + " (XID " + std::to_string(xid) +
        "); GpuFailurePolicy=" + policy);
    if (Status st = jobs_.CommitTransitions(plans); !st.ok()) {
      Log("job " + std::to_string(id) + ": GPU failure not recorded (" + st.message() +
          "); the job is left as it is");
      continue;
    }
    if (pol == GpuFailurePolicy::kIgnore) continue;
    j = jobs_.Find(id);
    gpu_failure_ends_[id] = {pol == GpuFailurePolicy::kFail, msg};
    NodeRuntime* batch = nodes_.Find(j->alloc.front().node);
    for (size_t i = 1; i < j->alloc.size(); ++i) {  // the whole gang stops, not half of it
      NodeRuntime* other = nodes_.Find(j->alloc[i].node);
      if (other && other->link) other->link->Signal(id, 0, j->run);
    }
    if (batch && batch->link) {
      SendToNode(*batch, id, 0);
      continue;
    }
    if (pol == GpuFailurePolicy::kRequeue && MayStillRun(batch)) continue;  // requeued at its end
    gpu_failure_ends_.erase(id);  // the batch node is gone: end or requeue now
    if (pol == GpuFailurePolicy::kFail) {
      FinishJob(*j, JobState::kFailed, 0, 0, 0, msg, nullptr);
    } else {
      nodes_.Release(*j);
      jobs_.MarkRequeued(id, msg, nullptr);
    }
  }
  RequestSchedule();
}

}  // namespace tessera::ctld
