#pragma once
// GPU discovery, MIG reconfiguration and health events behind one interface (GpuBackend), with
// two implementations: SimulatedGpuBackend (gres.conf `Simulated=yes`, below) and NvmlGpuBackend
// (nvml_backend.h, libnvidia-ml.so.1 through dlopen). Both enforce the same MIG rules
// (mig_profiles.h).
//
// Invariants: Discover() returns devices with index 0..n-1 in order; the index is what ctld's
// NodeAllocation.gpu_indices refers to. Simulated UUIDs are deterministic (same cluster, node and
// index give the same UUID on every start and every host), formatted like NVIDIA's
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; simulated MIG UUIDs are "MIG-" + the same format
// derived from (GPU UUID, profile, start).
#include <cstdint>
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "common/status.h"
#include "common/mig_profiles.h"

namespace tessera::noded {

struct MigInstanceInfo {
  std::string profile;
  uint32_t start = 0;
  uint32_t size = 0;
  std::string uuid;
  uint32_t gpu_instance_id = 0;
};

struct GpuInfo {
  uint32_t index = 0;
  std::string uuid;
  std::string model;
  uint64_t memory_mib = 0;
  bool simulated = false;
  bool healthy = true;
  std::string health_reason;
  bool mig_enabled = false;
  std::vector<MigInstanceInfo> mig;
  uint32_t minor = 0;          // /dev/nvidia<minor>
  int32_t numa_node = -1;
  std::string pci_bus_id;      // "0000:3b:00.0"
  bool mps = false;
  uint32_t replicas = 0;
};

// Something the backend noticed about a GPU.
struct GpuEvent {
  uint32_t index = 0;
  uint32_t xid = 0;       // 0 with lost = true: the device fell off the bus
  bool lost = false;
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  virtual Result<std::vector<GpuInfo>> Discover() = 0;
  // Destroys `destroy` (MIG UUIDs) then creates `create` (profile + start) on GPU `index`; all or
  // nothing: the resulting layout is validated first and an invalid one changes nothing.
  virtual Status ConfigureMig(uint32_t index, const std::vector<MigPlacement>& create,
                              const std::vector<std::string>& destroy) = 0;
  // Events since the last call; waits at most timeout_ms for the first one.
  virtual std::vector<GpuEvent> PollEvents(int timeout_ms) = 0;
  // What the last Discover() had to say to the admin (a bad gres.conf line, which MIG layout
  // won); noded logs them. Taken once.
  virtual std::vector<std::string> TakeNotes() { return {}; }
};

// Extra per-declaration settings of simulated GPUs, read by noded from gres.conf lines:
//   MigEnabled=yes MigLayout=3g.40gb@0,2g.20gb,1g.10gb  (start optional: placed automatically)
//   Mps=yes Replicas=4 NumaNode=1
struct SimGpuOptions {
  bool mig_enabled = false;
  std::vector<std::string> mig_layout;  // "profile" or "profile@start"
  bool mps = false;
  uint32_t replicas = 0;
  int32_t numa_node = -1;
};

// The options of every Name=gpu gres.conf line naming `node`, in file order (the same order as
// ClusterConfig::gpus[node]). Errors name file:line.
Result<std::vector<SimGpuOptions>> ParseSimGpuOptions(const std::vector<ConfigLine>& gres,
                                                      const std::string& node);

// Devices from `decls` with simulated=true, in declaration order; non-simulated declarations are
// left to a real backend and ignored here. The MIG tables are chosen by Type and MemoryMiB
// (FindMigModelFor: Type=a100 MemoryMiB=81920 is an A100 80GB). MIG layouts changed by
// ConfigureMig are kept in <state_dir>/gpu.<index>.mig (when state_dir is set) and win over
// MigLayout on restart; when they differ a note says which won (TakeNotes). A bad line
// (MigEnabled=yes on a type with no MIG tables, an invalid MigLayout) does not stop the node:
// its GPUs are reported unhealthy with the reason naming gres.conf file:line (and noted).
// Injection for tests: a file <state_dir>/inject-xid.<index> holding an XID number (or "lost")
// is consumed by PollEvents and reported as that event.
class SimulatedGpuBackend final : public GpuBackend {
 public:
  SimulatedGpuBackend(std::string cluster_name, std::string node, std::vector<GpuDecl> decls,
                      std::vector<SimGpuOptions> options = {}, std::string state_dir = "");
  Result<std::vector<GpuInfo>> Discover() override;
  Status ConfigureMig(uint32_t index, const std::vector<MigPlacement>& create,
                      const std::vector<std::string>& destroy) override;
  std::vector<GpuEvent> PollEvents(int timeout_ms) override;
  std::vector<std::string> TakeNotes() override;

 private:
  Status Build();
  Result<std::vector<MigPlacement>> LayoutFor(const GpuDecl& d, const SimGpuOptions& o,
                                              const MigModel& model, uint32_t index);
  Status SaveLayout(const GpuInfo& g) const;
  std::string cluster_;
  std::string node_;
  std::vector<GpuDecl> decls_;
  std::vector<SimGpuOptions> options_;
  std::string state_dir_;
  bool built_ = false;
  std::vector<GpuInfo> gpus_;
  std::vector<std::string> notes_;
};

// "GPU-" + 128 bits of FNV-1a over (cluster, node, index), grouped 8-4-4-4-12.
std::string SimulatedGpuUuid(const std::string& cluster, const std::string& node, uint32_t index);
std::string SimulatedMigUuid(const std::string& gpu_uuid, const std::string& profile,
                             uint32_t start);

// MIG instances of `g` from placements (sizes from the profile table, simulated UUIDs).
std::vector<MigInstanceInfo> SimulatedMigInstances(const GpuInfo& g,
                                                   const std::vector<MigPlacement>& layout);

}  // namespace tessera::noded
