#pragma once
// noded's view of its GPUs over time: health (XID errors, lost devices) and MIG layout changes
// requested by ctld. Owned by the agent loop (one thread).
//
// Health: every XID reported by the backend drains that GPU (healthy=false, health_reason
// "XID <n>: <meaning>") unless the XID is in the admin's ignore list (tessera.conf
// `GpuIgnoredXids=13,31,43,45,68`: application faults); a lost device drains it with
// "GPU fell off the bus / lost". The rest of the node is untouched. Each change queues a
// NodeMessage GpuHealth with the GPU's full description. A drained GPU stays drained until the
// controller resumes it (SetDrain, from a GpuDrain message; issue 14): a repeated XID on a
// drained GPU is not reported again (same reason), one after the resume is. ctld holds the
// durable drain; at registration it sends every drained GPU (SyncDrains) and noded takes that
// as the truth for all its GPUs.
// MIG: ConfigureMig is refused (MigConfigured ok=false, nothing changed) when it destroys an
// instance a running job uses, or when the backend refuses the resulting layout; on success the
// new layout is reported in MigConfigured and in a GpuHealth update.
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "noded/gpu_backend.h"
#include "tessera/v1/agent.pb.h"

namespace tessera::noded {

class GpuManager {
 public:
  using LogFn = std::function<void(const std::string&)>;
  GpuManager(GpuBackend& backend, std::vector<GpuInfo> gpus, std::set<uint32_t> ignored_xids,
             LogFn log)
      : backend_(backend), gpus_(std::move(gpus)), ignored_(std::move(ignored_xids)),
        log_(std::move(log)) {}

  // Takes the backend's events (waits at most timeout_ms) and applies them.
  void Poll(int timeout_ms = 0);
  void Configure(const tessera::v1::ConfigureMig& req,
                 const std::map<std::string, uint64_t>& in_use);
  const std::vector<GpuInfo>& gpus() const { return gpus_; }
  // The controller's drain (drained=true, reason) or resume (drained=false) of GPU `index`.
  // Changes only noded's flag; nothing is reported back. Unknown indexes are ignored.
  void SetDrain(uint32_t index, bool drained, const std::string& reason);
  // Every GPU in `drained` (index -> reason) drained, every other one resumed.
  void SyncDrains(const std::map<uint32_t, std::string>& drained);
  std::vector<tessera::v1::NodeMessage> TakeOutbox();
  // Called with the GPU after each successful MIG reconfiguration (its new instances), so job
  // isolation opens the new instances' devices (IsolationPlanner::UpdateGpu).
  void SetLayoutListener(std::function<void(const GpuInfo&)> f) { on_layout_ = std::move(f); }

 private:
  void Drain(uint32_t index, uint32_t xid, const std::string& reason);
  GpuBackend& backend_;
  std::vector<GpuInfo> gpus_;
  std::set<uint32_t> ignored_;
  LogFn log_;
  std::vector<tessera::v1::NodeMessage> outbox_;
  std::map<std::string, uint64_t> last_in_use_;
  std::function<void(const GpuInfo&)> on_layout_;
};

void FillGpuDevice(const GpuInfo& g, const std::map<std::string, uint64_t>& in_use,
                   tessera::v1::GpuDevice* out);

// "13,31,43" -> {13,31,43}; errors name the bad element.
Result<std::set<uint32_t>> ParseXidList(const std::string& text);
// A short meaning of common XIDs (NVIDIA "XID Errors" table); "" when unknown.
std::string XidMeaning(uint32_t xid);

}  // namespace tessera::noded
