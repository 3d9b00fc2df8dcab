#pragma once
// GPU discovery behind an interface. Today: the simulated backend, built from the gres.conf
// declarations of this node that say Simulated=yes. Later: NVML (dlopen), same interface.
//
// Invariants: Discover() returns devices with index 0..n-1 in order; the index is what ctld's
// NodeAllocation.gpu_indices refers to. Simulated UUIDs are deterministic (same cluster, node and
// index give the same UUID on every start and every host), formatted like NVIDIA's
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
#include <cstdint>
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "common/status.h"

namespace tessera::noded {

struct GpuInfo {
  uint32_t index = 0;
  std::string uuid;
  std::string model;
  uint64_t memory_mib = 0;
  bool simulated = false;
  bool healthy = true;
  std::string health_reason;
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  virtual Result<std::vector<GpuInfo>> Discover() = 0;
};

// Devices from `decls` with simulated=true, in declaration order; non-simulated declarations are
// left to a real backend and ignored here.
class SimulatedGpuBackend final : public GpuBackend {
 public:
  SimulatedGpuBackend(std::string cluster_name, std::string node, std::vector<GpuDecl> decls)
      : cluster_(std::move(cluster_name)), node_(std::move(node)), decls_(std::move(decls)) {}
  Result<std::vector<GpuInfo>> Discover() override;

 private:
  std::string cluster_;
  std::string node_;
  std::vector<GpuDecl> decls_;
};

// "GPU-" + 128 bits of FNV-1a over (cluster, node, index), grouped 8-4-4-4-12.
std::string SimulatedGpuUuid(const std::string& cluster, const std::string& node, uint32_t index);

}  // namespace tessera::noded
