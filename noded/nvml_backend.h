#pragma once
// GpuBackend over NVIDIA's NVML, loaded at run time with dlopen("libnvidia-ml.so.1"): no NVIDIA
// headers or libraries at build time. The NVML types and entry points used are declared in
// nvml_backend.cc from NVML's API reference (https://docs.nvidia.com/deploy/nvml-api/).
//
// Discover: every device (index order = NVML index), UUID, name, memory, minor number, PCI bus
// id, MIG mode and the current GPU instances (profile name from our tables via the NVML profile
// query index, placement, MIG device UUID). ConfigureMig: validates the resulting layout against
// the embedded tables (mig_profiles.h) first, then destroys (compute instances, then the GPU
// instance) and creates with nvmlDeviceCreateGpuInstanceWithPlacement plus one full compute
// instance. It never changes MIG mode. PollEvents: XID critical errors via nvmlEventSetWait_v2;
// NVML_ERROR_GPU_IS_LOST from a device becomes a lost event.
#include <memory>

#include "noded/gpu_backend.h"

namespace tessera::noded {

class NvmlGpuBackend final : public GpuBackend {
 public:
  // Loads libnvidia-ml.so.1 and initializes NVML; an error says which step failed.
  static Result<std::unique_ptr<NvmlGpuBackend>> Open();
  ~NvmlGpuBackend() override;
  Result<std::vector<GpuInfo>> Discover() override;
  Status ConfigureMig(uint32_t index, const std::vector<MigPlacement>& create,
                      const std::vector<std::string>& destroy) override;
  std::vector<GpuEvent> PollEvents(int timeout_ms) override;

  struct Api;  // the resolved NVML entry points (nvml_backend.cc)

 private:
  explicit NvmlGpuBackend(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
};

}  // namespace tessera::noded
