#pragma once
// The device files that give a job access to one MIG instance, as the NVIDIA container toolkit
// opens them. Besides the parent GPU's /dev/nvidia<minor>, an instance needs two nvidia-caps
// character devices: its GPU instance's and its compute instance's access capability.
//   <proc_root>/driver/nvidia/capabilities/gpu<minor>/mig/gi<GI>/access        "DeviceFileMinor: N"
//   <proc_root>/driver/nvidia/capabilities/gpu<minor>/mig/gi<GI>/ci<CI>/access  "DeviceFileMinor: M"
// are /dev/nvidia-caps/nvidia-cap<N> and nvidia-cap<M>; their major is the "nvidia-caps" line
// of <proc_root>/devices. The proc root is a setting (tessera.conf NvidiaProcRoot=, default
// /proc) so tests can provide a fake tree. Static layouts have one compute instance per GPU
// instance: CI 0.
//
// Simulated GPUs have no driver: unless a fake tree provides the files, their rules are made
// up deterministically (SimulatedMigCapRules) so tests can check which devices a job got.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "noded/cgroup.h"
#include "noded/gpu_backend.h"

namespace tessera::noded {

// The nvidia-caps major used for simulated GPUs when <proc_root>/devices has no nvidia-caps.
inline constexpr int64_t kSimulatedNvidiaCapsMajor = 511;

// "c <nvidia-caps major>:<minor> rwm" for the GI and CI access files of instance `gi`/`ci` of
// the GPU with device minor `gpu_minor`. Errors name the file that is missing or malformed.
Result<std::vector<DeviceRule>> MigCapRules(const std::string& proc_root, uint32_t gpu_minor,
                                            uint32_t gi, uint32_t ci = 0);

// Deterministic stand-ins for a simulated GPU: minors 1000 + 100 * gpu_minor + 2 * gi (GI
// access) and that + 1 (CI 0 access), major from <proc_root>/devices or
// kSimulatedNvidiaCapsMajor.
std::vector<DeviceRule> SimulatedMigCapRules(const std::string& proc_root, uint32_t gpu_minor,
                                             uint32_t gi);

// The rules of every MIG instance of `gpus`, by instance UUID. Real GPUs read the proc tree
// (an instance whose files cannot be read gets no rule and a message in `errors`); simulated
// ones use the files when the tree has them, SimulatedMigCapRules otherwise.
std::map<std::string, std::vector<DeviceRule>> MigDeviceRules(const std::vector<GpuInfo>& gpus,
                                                             const std::string& proc_root,
                                                             std::vector<std::string>* errors);

}  // namespace tessera::noded
