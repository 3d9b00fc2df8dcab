#include "noded/gpu_manager.h"

#include <algorithm>

#include <sstream>

namespace tessera::noded {

namespace v1 = tessera::v1;

void FillGpuDevice(const GpuInfo& g, const std::map<std::string, uint64_t>& in_use,
                   v1::GpuDevice* d) {
  d->set_index(g.index);
  d->set_uuid(g.uuid);
  d->set_model(g.model);
  d->set_memory_mib(g.memory_mib);
  d->set_simulated(g.simulated);
  d->set_healthy(g.healthy);
  d->set_health_reason(g.health_reason);
  d->set_mig_enabled(g.mig_enabled);
  d->set_numa_node(g.numa_node);
  d->set_pci_bus_id(g.pci_bus_id);
  d->set_mps(g.mps);
  d->set_replicas(g.replicas);
  d->set_minor(g.minor);
  for (const auto& m : g.mig) {
    auto* mi = d->add_mig_instances();
    mi->set_profile(m.profile);
    mi->set_placement_start(m.start);
    mi->set_placement_size(m.size);
    mi->set_uuid(m.uuid);
    mi->set_gpu_instance_id(m.gpu_instance_id);
    auto it = in_use.find(m.uuid);
    mi->set_in_use_by_job(it == in_use.end() ? 0 : it->second);
  }
}

Result<std::set<uint32_t>> ParseXidList(const std::string& text) {
  std::set<uint32_t> out;
  std::stringstream ss(text);
  for (std::string x; std::getline(ss, x, ',');) {
    while (!x.empty() && x.front() == ' ') x.erase(0, 1);
    while (!x.empty() && x.back() == ' ') x.pop_back();
    if (x.empty()) continue;
    if (x.size() > 5 || x.find_first_not_of("0123456789") != std::string::npos)
      return InvalidArgument("XID list '" + text + "': '" + x + "' is not a number");
    out.insert(static_cast<uint32_t>(std::stoul(x)));
  }
  return out;
}

std::string XidMeaning(uint32_t xid) {
  switch (xid) {
    case 13: return "graphics engine exception";
    case 31: return "GPU memory page fault";
    case 43: return "GPU stopped processing";
    case 45: return "preemptive cleanup";
    case 48: return "double bit ECC error";
    case 63: return "ECC page retirement or row remapping";
    case 64: return "ECC page retirement or row remapping failure";
    case 68: return "NVDEC0 exception";
    case 74: return "NVLink error";
    case 79: return "GPU has fallen off the bus";
    case 92: return "high single-bit ECC error rate";
    case 94: return "contained ECC error";
    case 95: return "uncontained ECC error";
    case 119: return "GSP RPC timeout";
    default: return "";
  }
}

void GpuManager::Drain(uint32_t index, uint32_t xid, const std::string& reason) {
  if (index >= gpus_.size()) return;
  GpuInfo& g = gpus_[index];
  bool changed = g.healthy || g.health_reason != reason;
  g.healthy = false;
  g.health_reason = reason;
  if (!changed) return;
  log_("GPU " + std::to_string(index) + " (" + g.uuid + ") drained: " + reason);
  v1::NodeMessage m;
  FillGpuDevice(g, last_in_use_, m.mutable_gpu_health()->mutable_gpu());
  m.mutable_gpu_health()->set_xid(xid);
  outbox_.push_back(std::move(m));
}

void GpuManager::SetDrain(uint32_t index, bool drained, const std::string& reason) {
  if (index >= gpus_.size()) return;
  GpuInfo& g = gpus_[index];
  if (drained == !g.healthy && (!drained || g.health_reason == reason)) return;
  g.healthy = !drained;
  g.health_reason = drained ? reason : "";
  log_("GPU " + std::to_string(index) + " (" + g.uuid + ") " +
       (drained ? "drained by the controller: " + reason
                : std::string("resumed by the controller; a later XID is reported again")));
}

void GpuManager::SyncDrains(const std::map<uint32_t, std::string>& drained) {
  for (const auto& g : std::vector<GpuInfo>(gpus_)) {
    auto it = drained.find(g.index);
    SetDrain(g.index, it != drained.end(), it == drained.end() ? "" : it->second);
  }
}

void GpuManager::Poll(int timeout_ms) {
  for (const GpuEvent& e : backend_.PollEvents(timeout_ms)) {
    if (e.lost) {
      Drain(e.index, 0, "GPU lost (fell off the bus or stopped answering)");
      continue;
    }
    std::string meaning = XidMeaning(e.xid);
    std::string what = "XID " + std::to_string(e.xid) + (meaning.empty() ? "" : ": " + meaning);
    if (ignored_.count(e.xid)) {
      log_("GPU " + std::to_string(e.index) + ": " + what + " (application fault; ignored)");
      continue;
    }
    Drain(e.index, e.xid, what);
  }
}

void GpuManager::Configure(const v1::ConfigureMig& req,
                           const std::map<std::string, uint64_t>& in_use) {
  last_in_use_ = in_use;
  v1::NodeMessage m;
  auto* r = m.mutable_mig_configured();
  r->set_request_id(req.request_id());
  Status st = Status::Ok();
  for (const auto& u : req.destroy()) {
    auto it = in_use.find(u);
    if (it != in_use.end() && st.ok())
      st = FailedPrecondition("MIG instance " + u + " is in use by job " +
                              std::to_string(it->second));
  }
  // Creates with placement_size 0 leave the start to the node: placed after what stays and
  // the explicitly placed ones, under the model's placement rules.
  std::vector<MigPlacement> create;
  std::vector<std::string> floating;
  for (const auto& c : req.create()) {
    if (c.placement_size() == 0) floating.push_back(c.profile());
    else create.push_back({c.profile(), c.placement_start()});
  }
  std::vector<std::string> destroy(req.destroy().begin(), req.destroy().end());
  if (st.ok() && !floating.empty()) {
    const MigModel* model = req.gpu_index() < gpus_.size() ? FindMigModelFor(gpus_[req.gpu_index()].model, gpus_[req.gpu_index()].memory_mib) : nullptr;
    if (!model) {
      st = InvalidArgument("GPU " + std::to_string(req.gpu_index()) + " has no MIG profile table");
    } else {
      std::vector<MigPlacement> fixed = create;
      for (const auto& m : gpus_[req.gpu_index()].mig)
        if (std::find(destroy.begin(), destroy.end(), m.uuid) == destroy.end()) fixed.push_back({m.profile, m.start});
      auto placed = PlaceMigProfiles(*model, fixed, floating);
      if (placed.ok()) create.insert(create.end(), placed->begin(), placed->end());
      else st = placed.status();
    }
  }
  if (st.ok()) st = backend_.ConfigureMig(req.gpu_index(), create, destroy);
  if (st.ok()) {
    auto fresh = backend_.Discover();
    if (fresh.ok() && req.gpu_index() < fresh->size() && req.gpu_index() < gpus_.size()) {
      GpuInfo& g = gpus_[req.gpu_index()];
      g.mig = (*fresh)[req.gpu_index()].mig;
      if (on_layout_) on_layout_(g);
    }
  }
  r->set_ok(st.ok());
  r->set_error(st.ok() ? "" : st.message());
  log_("MIG reconfiguration of GPU " + std::to_string(req.gpu_index()) +
       (st.ok() ? " done" : " refused: " + st.message()));
  if (req.gpu_index() < gpus_.size()) FillGpuDevice(gpus_[req.gpu_index()], in_use, r->mutable_gpu());
  outbox_.push_back(std::move(m));
  if (st.ok() && req.gpu_index() < gpus_.size()) {
    v1::NodeMessage h;
    FillGpuDevice(gpus_[req.gpu_index()], in_use, h.mutable_gpu_health()->mutable_gpu());
    outbox_.push_back(std::move(h));
  }
}

std::vector<v1::NodeMessage> GpuManager::TakeOutbox() {
  std::vector<v1::NodeMessage> out;
  out.swap(outbox_);
  return out;
}

}  // namespace tessera::noded
