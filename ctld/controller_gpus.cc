// Controller: per-GPU drain and resume, durable (issue 14). Split from controller.cc; same
// class, same core-thread rule. ctld's gpu_drain table is the truth for which GPUs are held
// out of scheduling; it is laid over what nodes report (ApplyGpuDrains) and sent to them (the
// GpuDrain message, and Registered.gpu_drains), so a resumed GPU stays resumed over a ctld
// restart and a repeated XID after a resume is reported again.
#include <algorithm>

#include "common/hostlist.h"
#include "ctld/controller.h"
#include "ctld/gpu_failures.h"
#include "ctld/log.h"
#include "ctld/nodes/gpu_use.h"

namespace tessera::ctld {
namespace {

constexpr char kGpuCountReason[] = "gres/gpu count reported lower than configured";

// GPUs configured for the node: its gres.conf lines, else its NodeName Gres=gpu counts.
uint32_t ConfiguredGpus(const ClusterConfig& cfg, const NodeConfig& nc) {
  uint32_t n = 0;
  auto it = cfg.gpus.find(nc.name);
  if (it != cfg.gpus.end()) {
    for (const auto& d : it->second) n += d.count;
    return n;
  }
  for (const auto& [type, count] : nc.gres_gpus) n += count;
  return n;
}

bool HasGpu(const NodeRuntime& n, const ClusterConfig& cfg, uint32_t gpu) {
  for (const auto& g : n.gpus)
    if (g.index == gpu) return true;
  return gpu < ConfiguredGpus(cfg, *n.config);
}

}  // namespace

void Controller::ApplyGpuDrains(NodeRuntime& n) {
  for (auto& g : n.gpus) {
    auto it = gpu_drains_.find({n.config->name, g.index});
    if (it == gpu_drains_.end()) continue;
    g.healthy = false;
    g.health_reason = it->second.reason;
    g.reason_time = it->second.reason_time;
    g.reason_uid = it->second.reason_uid;
  }
}

void Controller::RecordReportedDrain(const std::string& node, const GpuState& g) {
  GpuDrainRow row{node, g.index, g.health_reason.empty() ? "unhealthy" : g.health_reason,
                  clock_->Now(), "node", self_uid_};
  gpu_drains_[{node, g.index}] = row;
  Batch b;
  b.PutGpuDrain(row);
  store_->Commit(std::move(b), [node, idx = g.index](const Status& st) {
    if (!st.ok())
      Log("node " + node + " GPU " + std::to_string(idx) + ": drain not recorded: " + st.message());
  });
}

std::vector<GpuState> Controller::CheckRegisteredGpus(NodeRuntime& n, RegisterReply* reply,
                                                     const std::vector<GpuState>& before) {
  const std::string& name = n.config->name;
  std::vector<GpuState> failed = RegisteredGpuFailures(before, n.gpus, [&](uint32_t i) {
    return gpu_drains_.count({name, i}) > 0;
  });
  for (const auto& g : n.gpus)
    if (!g.healthy && !gpu_drains_.count({name, g.index})) {
      Log("node " + name + " GPU " + std::to_string(g.index) + " reported drained: " +
          g.health_reason);
      RecordReportedDrain(name, g);
    }
  ApplyGpuDrains(n);
  for (auto it = gpu_drains_.lower_bound({name, 0});
       it != gpu_drains_.end() && it->first.first == name; ++it)
    reply->gpu_drains.push_back(it->second);
  CheckGpuCount(n);
  // A model that is no configured type (an NVML name noded could not map): typed requests will
  // not use that GPU. Said here too, where the admin looks first.
  auto decls = cfg_->gpus.find(name);
  if (decls == cfg_->gpus.end()) return failed;
  std::string types;
  bool typed = false;
  for (const auto& d : decls->second) {
    typed = typed || !d.model.empty();
    types += (types.empty() ? "" : ",") + d.model;
  }
  for (const auto& g : n.gpus) {
    bool known = !typed || std::any_of(decls->second.begin(), decls->second.end(),
                                       [&](const GpuDecl& d) { return d.model == g.model; });
    if (!known)
      Log("warning: node " + name + " GPU " + std::to_string(g.index) + " reports model '" +
          g.model + "', which is no Type configured for it in gres.conf (" + types +
          "): requests for a typed GPU will not use it");
  }
  return failed;
}

void Controller::CheckGpuCount(NodeRuntime& n) {
  uint32_t want = ConfiguredGpus(*cfg_, *n.config);
  size_t have = n.gpus.size();
  bool ours = n.drain && n.reason.rfind(kGpuCountReason, 0) == 0;
  NodeStateRow row{n.config->name, false, false, "", 0};
  if (have < want) {
    std::string reason = std::string(kGpuCountReason) + " (" + std::to_string(have) + " < " +
                         std::to_string(want) + ")";
    if ((n.drain && !ours) || n.base == NodeBase::kDown) {
      Log("node " + n.config->name + ": " + reason + "; already drained: " + n.reason);
      return;
    }
    if (ours && n.reason == reason) return;
    Log("node " + n.config->name + " drained: " + reason);
    n.drain = true;
    n.reason = reason;
    n.reason_time = clock_->Now();
    n.reason_uid = self_uid_;
    row = {n.config->name, true, false, reason, n.reason_time, self_uid_};
  } else if (ours) {
    Log("node " + n.config->name + " reports its " + std::to_string(want) +
        " configured GPUs again: the GPU count drain is lifted");
    n.drain = false;
    n.reason.clear();
  } else {
    return;
  }
  Batch b;
  b.PutNodeState(row);
  store_->Commit(std::move(b), [name = n.config->name](const Status& st) {
    if (!st.ok()) Log("node " + name + ": GPU count drain not recorded: " + st.message());
  });
}

Status Controller::UpdateGpu(const std::string& expr, uint32_t gpu, const std::string& action,
                             const std::string& reason, int64_t uid) {
  auto names = ExpandHostlist(expr);
  if (!names.ok()) return names.status();
  if (action != "DRAIN" && action != "RESUME")
    return InvalidArgument("a GPU can be set DRAIN or RESUME, not " + action);
  if (action == "DRAIN" && reason.empty())
    return InvalidArgument("a Reason= is required to drain a GPU");
  for (const auto& name : *names) {
    const NodeRuntime* n = nodes_.Find(name);
    if (!n) return NotFound("Invalid node name specified: " + name);
    if (!HasGpu(*n, *cfg_, gpu))
      return NotFound("node " + name + " has no GPU " + std::to_string(gpu));
    if (action == "RESUME" && !n->link)
      return FailedPrecondition("node " + name + " is not connected; resume its GPU " +
                                std::to_string(gpu) + " once it has registered");
  }
  int64_t now = clock_->Now();
  Batch b;
  for (const auto& name : *names) {
    if (action == "DRAIN") b.PutGpuDrain({name, gpu, reason, now, "admin", uid});
    else b.DeleteGpuDrain(name, gpu);
  }
  TESSERA_RETURN_IF_ERROR(store_->CommitSync(std::move(b)));  // durable before applied
  for (const auto& name : *names) {
    NodeRuntime* n = nodes_.Find(name);
    if (action == "DRAIN") {
      gpu_drains_[{name, gpu}] = {name, gpu, reason, now, "admin", uid};
    } else {
      gpu_drains_.erase({name, gpu});
      for (auto& g : n->gpus)
        if (g.index == gpu) g.healthy = true, g.health_reason.clear(), g.reason_uid = -1;
    }
    ApplyGpuDrains(*n);
    Log("node " + name + " GPU " + std::to_string(gpu) +
        (action == "DRAIN" ? " drained by an administrator: " + reason
                           : std::string(" resumed by an administrator")));
    if (n->link) n->link->SetGpuDrain(gpu, action == "DRAIN", reason);
  }
  RequestSchedule();
  return Status::Ok();
}

void Controller::OnGpuUpdate(const std::string& node, const GpuState& gpu, uint32_t xid) {
  NodeRuntime* n = nodes_.Find(node);
  if (!n) return;
  auto it = std::find_if(n->gpus.begin(), n->gpus.end(), [&](const GpuState& g) { return g.index == gpu.index; });
  if (it == n->gpus.end()) {
    n->gpus.push_back(gpu);
  } else {
    *it = gpu;
  }
  ApplyMigUse(*n);
  if (!gpu.healthy) {
    Log("node " + node + " GPU " + std::to_string(gpu.index) + " drained: " + gpu.health_reason +
        (xid ? " (XID " + std::to_string(xid) + ")" : ""));
    if (!gpu_drains_.count({node, gpu.index})) RecordReportedDrain(node, gpu);  // durable
  }
  ApplyGpuDrains(*n);
  if (!gpu.healthy && (xid != 0 || gpu.health_reason.rfind("GPU lost", 0) == 0))
    OnGpuFailure(*n, gpu, xid);
  RequestSchedule();
}

}  // namespace tessera::ctld
