// NVML declarations restated from the NVML API reference
// (https://docs.nvidia.com/deploy/nvml-api/ : nvmlDeviceQueries, nvmlGpuInstance*, nvmlEvents,
// structs nvmlMemory_t, nvmlPciInfo_t, nvmlGpuInstancePlacement_t, nvmlGpuInstanceInfo_t,
// nvmlGpuInstanceProfileInfo_t, nvmlEventData_t). Only what this backend calls is declared.
#include "noded/nvml_backend.h"

#include <dlfcn.h>

#include <algorithm>

#include <map>

namespace tessera::noded {
namespace {

using nvmlReturn_t = int;              // NVML_SUCCESS = 0
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlGpuInstance_t = struct nvmlGpuInstance_st*;
using nvmlComputeInstance_t = struct nvmlComputeInstance_st*;
using nvmlEventSet_t = struct nvmlEventSet_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlErrorTimeout = 10;
constexpr nvmlReturn_t kNvmlErrorGpuIsLost = 15;
constexpr unsigned long long kNvmlEventTypeXidCriticalError = 0x8;
constexpr unsigned kNvmlDeviceMigEnable = 1;
constexpr unsigned kNvmlGpuInstanceProfileCount = 0x12;

struct nvmlMemory_t { unsigned long long total, free, used; };
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct nvmlGpuInstancePlacement_t { unsigned start, size; };
struct nvmlGpuInstanceInfo_t {
  nvmlDevice_t device;
  unsigned id, profileId;
  nvmlGpuInstancePlacement_t placement;
};
struct nvmlGpuInstanceProfileInfo_t {
  unsigned id, isP2pSupported, sliceCount, instanceCount, multiprocessorCount, copyEngineCount,
      decoderCount, encoderCount, jpegCount, ofaCount;
  unsigned long long memorySizeMB;
};
struct nvmlComputeInstanceProfileInfo_t {
  unsigned id, sliceCount, instanceCount, multiprocessorCount, sharedCopyEngineCount,
      sharedDecoderCount, sharedEncoderCount, sharedJpegCount, sharedOfaCount;
};
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType, eventData;
  unsigned gpuInstanceId, computeInstanceId;
};

// NVML_COMPUTE_INSTANCE_PROFILE_* index of the compute instance spanning a whole GI of N slices.
int FullComputeProfile(unsigned slices) {
  switch (slices) {
    case 1: return 0;
    case 2: return 1;
    case 3: return 2;
    case 4: return 3;
    case 7: return 4;
    case 8: return 5;
    case 6: return 6;
    default: return -1;
  }
}

}  // namespace

struct NvmlGpuBackend::Api {
  void* lib = nullptr;
#define TESSERA_NVML_FN(name, ...) nvmlReturn_t (*name)(__VA_ARGS__) = nullptr;
  TESSERA_NVML_FN(nvmlInit_v2)
  TESSERA_NVML_FN(nvmlShutdown)
  TESSERA_NVML_FN(nvmlDeviceGetCount_v2, unsigned*)
  TESSERA_NVML_FN(nvmlDeviceGetHandleByIndex_v2, unsigned, nvmlDevice_t*)
  TESSERA_NVML_FN(nvmlDeviceGetUUID, nvmlDevice_t, char*, unsigned)
  TESSERA_NVML_FN(nvmlDeviceGetName, nvmlDevice_t, char*, unsigned)
  TESSERA_NVML_FN(nvmlDeviceGetMemoryInfo, nvmlDevice_t, nvmlMemory_t*)
  TESSERA_NVML_FN(nvmlDeviceGetMinorNumber, nvmlDevice_t, unsigned*)
  TESSERA_NVML_FN(nvmlDeviceGetPciInfo_v3, nvmlDevice_t, nvmlPciInfo_t*)
  TESSERA_NVML_FN(nvmlDeviceGetMigMode, nvmlDevice_t, unsigned*, unsigned*)
  TESSERA_NVML_FN(nvmlDeviceGetGpuInstanceProfileInfo, nvmlDevice_t, unsigned,
                  nvmlGpuInstanceProfileInfo_t*)
  TESSERA_NVML_FN(nvmlDeviceGetGpuInstances, nvmlDevice_t, unsigned, nvmlGpuInstance_t*,
                  unsigned*)
  TESSERA_NVML_FN(nvmlGpuInstanceGetInfo, nvmlGpuInstance_t, nvmlGpuInstanceInfo_t*)
  TESSERA_NVML_FN(nvmlDeviceCreateGpuInstanceWithPlacement, nvmlDevice_t, unsigned,
                  const nvmlGpuInstancePlacement_t*, nvmlGpuInstance_t*)
  TESSERA_NVML_FN(nvmlGpuInstanceDestroy, nvmlGpuInstance_t)
  TESSERA_NVML_FN(nvmlGpuInstanceGetComputeInstanceProfileInfo, nvmlGpuInstance_t, unsigned,
                  unsigned, nvmlComputeInstanceProfileInfo_t*)
  TESSERA_NVML_FN(nvmlGpuInstanceCreateComputeInstance, nvmlGpuInstance_t, unsigned,
                  nvmlComputeInstance_t*)
  TESSERA_NVML_FN(nvmlGpuInstanceGetComputeInstances, nvmlGpuInstance_t, unsigned,
                  nvmlComputeInstance_t*, unsigned*)
  TESSERA_NVML_FN(nvmlComputeInstanceDestroy, nvmlComputeInstance_t)
  TESSERA_NVML_FN(nvmlDeviceGetMaxMigDeviceCount, nvmlDevice_t, unsigned*)
  TESSERA_NVML_FN(nvmlDeviceGetMigDeviceHandleByIndex, nvmlDevice_t, unsigned, nvmlDevice_t*)
  TESSERA_NVML_FN(nvmlDeviceGetGpuInstanceId, nvmlDevice_t, unsigned*)
  TESSERA_NVML_FN(nvmlEventSetCreate, nvmlEventSet_t*)
  TESSERA_NVML_FN(nvmlDeviceRegisterEvents, nvmlDevice_t, unsigned long long, nvmlEventSet_t)
  TESSERA_NVML_FN(nvmlEventSetWait_v2, nvmlEventSet_t, nvmlEventData_t*, unsigned)
#undef TESSERA_NVML_FN
  const char* (*nvmlErrorString)(nvmlReturn_t) = nullptr;
  nvmlEventSet_t events = nullptr;
  std::vector<nvmlDevice_t> devices;
  std::vector<std::string> models;

  std::string Err(const char* what, nvmlReturn_t r) const {
    return std::string(what) + ": " + (nvmlErrorString ? nvmlErrorString(r) : "error") + " (" +
           std::to_string(r) + ")";
  }
};

namespace {

template <typename F>
bool Resolve(void* lib, const char* name, F** out) {
  *out = reinterpret_cast<F*>(::dlsym(lib, name));
  return *out != nullptr;
}

}  // namespace

Result<std::unique_ptr<NvmlGpuBackend>> NvmlGpuBackend::Open() {
  auto api = std::make_unique<Api>();
  api->lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api->lib) return NotFound(std::string("dlopen(libnvidia-ml.so.1): ") + ::dlerror());
  void* l = api->lib;
  bool ok = true;
#define R(name) ok = Resolve(l, #name, &api->name) && ok
  R(nvmlInit_v2); R(nvmlShutdown); R(nvmlDeviceGetCount_v2); R(nvmlDeviceGetHandleByIndex_v2);
  R(nvmlDeviceGetUUID); R(nvmlDeviceGetName); R(nvmlDeviceGetMemoryInfo);
  R(nvmlDeviceGetMinorNumber); R(nvmlDeviceGetPciInfo_v3); R(nvmlErrorString);
  R(nvmlEventSetCreate); R(nvmlDeviceRegisterEvents); R(nvmlEventSetWait_v2);
#undef R
  if (!ok) return NotFound("libnvidia-ml.so.1 lacks a basic NVML entry point");
  // MIG entry points are optional (older drivers): MIG is then reported off.
  Resolve(l, "nvmlDeviceGetMigMode", &api->nvmlDeviceGetMigMode);
  Resolve(l, "nvmlDeviceGetGpuInstanceProfileInfo", &api->nvmlDeviceGetGpuInstanceProfileInfo);
  Resolve(l, "nvmlDeviceGetGpuInstances", &api->nvmlDeviceGetGpuInstances);
  Resolve(l, "nvmlGpuInstanceGetInfo", &api->nvmlGpuInstanceGetInfo);
  Resolve(l, "nvmlDeviceCreateGpuInstanceWithPlacement",
          &api->nvmlDeviceCreateGpuInstanceWithPlacement);
  Resolve(l, "nvmlGpuInstanceDestroy", &api->nvmlGpuInstanceDestroy);
  Resolve(l, "nvmlGpuInstanceGetComputeInstanceProfileInfo",
          &api->nvmlGpuInstanceGetComputeInstanceProfileInfo);
  Resolve(l, "nvmlGpuInstanceCreateComputeInstance", &api->nvmlGpuInstanceCreateComputeInstance);
  Resolve(l, "nvmlGpuInstanceGetComputeInstances", &api->nvmlGpuInstanceGetComputeInstances);
  Resolve(l, "nvmlComputeInstanceDestroy", &api->nvmlComputeInstanceDestroy);
  Resolve(l, "nvmlDeviceGetMaxMigDeviceCount", &api->nvmlDeviceGetMaxMigDeviceCount);
  Resolve(l, "nvmlDeviceGetMigDeviceHandleByIndex", &api->nvmlDeviceGetMigDeviceHandleByIndex);
  Resolve(l, "nvmlDeviceGetGpuInstanceId", &api->nvmlDeviceGetGpuInstanceId);
  if (nvmlReturn_t r = api->nvmlInit_v2(); r != kNvmlSuccess)
    return Unavailable(api->Err("nvmlInit_v2", r));
  unsigned n = 0;
  if (nvmlReturn_t r = api->nvmlDeviceGetCount_v2(&n); r != kNvmlSuccess)
    return Unavailable(api->Err("nvmlDeviceGetCount_v2", r));
  if (api->nvmlEventSetCreate(&api->events) != kNvmlSuccess) api->events = nullptr;
  for (unsigned i = 0; i < n; ++i) {
    nvmlDevice_t d = nullptr;
    if (nvmlReturn_t r = api->nvmlDeviceGetHandleByIndex_v2(i, &d); r != kNvmlSuccess)
      return Unavailable(api->Err("nvmlDeviceGetHandleByIndex_v2", r));
    api->devices.push_back(d);
    if (api->events) api->nvmlDeviceRegisterEvents(d, kNvmlEventTypeXidCriticalError, api->events);
  }
  return std::unique_ptr<NvmlGpuBackend>(new NvmlGpuBackend(std::move(api)));
}

NvmlGpuBackend::NvmlGpuBackend(std::unique_ptr<Api> api) : api_(std::move(api)) {}

NvmlGpuBackend::~NvmlGpuBackend() {
  if (api_ && api_->nvmlShutdown) api_->nvmlShutdown();
}

namespace {

// Current GPU instances of `dev` with their MIG UUIDs, profile names from the model's table.
std::vector<MigInstanceInfo> ReadMig(const NvmlGpuBackend::Api& a, nvmlDevice_t dev,
                                     const MigModel* model) {
  std::vector<MigInstanceInfo> out;
  if (!a.nvmlDeviceGetGpuInstanceProfileInfo || !a.nvmlDeviceGetGpuInstances ||
      !a.nvmlGpuInstanceGetInfo)
    return out;
  std::map<unsigned, std::string> uuid_by_gi;
  unsigned max = 0;
  if (a.nvmlDeviceGetMaxMigDeviceCount && a.nvmlDeviceGetMaxMigDeviceCount(dev, &max) == 0)
    for (unsigned i = 0; i < max; ++i) {
      nvmlDevice_t mig = nullptr;
      unsigned gi = 0;
      char uuid[96] = {};
      if (a.nvmlDeviceGetMigDeviceHandleByIndex(dev, i, &mig) != 0) continue;
      if (a.nvmlDeviceGetGpuInstanceId(mig, &gi) == 0 &&
          a.nvmlDeviceGetUUID(mig, uuid, sizeof uuid) == 0)
        uuid_by_gi[gi] = uuid;
    }
  for (unsigned q = 0; q < kNvmlGpuInstanceProfileCount; ++q) {
    nvmlGpuInstanceProfileInfo_t info{};
    if (a.nvmlDeviceGetGpuInstanceProfileInfo(dev, q, &info) != 0) continue;
    std::string name;
    if (model)
      for (const auto& p : model->profiles)
        if (p.nvml_profile == q) name = p.name;
    if (name.empty())
      name = std::to_string(info.sliceCount) + "g." +
             std::to_string((info.memorySizeMB + 1023) / 1024) + "gb";
    std::vector<nvmlGpuInstance_t> gis(info.instanceCount ? info.instanceCount : 8);
    unsigned count = 0;
    if (a.nvmlDeviceGetGpuInstances(dev, info.id, gis.data(), &count) != 0) continue;
    for (unsigned k = 0; k < count; ++k) {
      nvmlGpuInstanceInfo_t gi{};
      if (a.nvmlGpuInstanceGetInfo(gis[k], &gi) != 0) continue;
      out.push_back({name, gi.placement.start, gi.placement.size, uuid_by_gi[gi.id], gi.id});
    }
  }
  return out;
}

}  // namespace

Result<std::vector<GpuInfo>> NvmlGpuBackend::Discover() {
  std::vector<GpuInfo> out;
  const Api& a = *api_;
  for (size_t i = 0; i < a.devices.size(); ++i) {
    nvmlDevice_t d = a.devices[i];
    GpuInfo g;
    g.index = static_cast<uint32_t>(i);
    char buf[128] = {};
    if (nvmlReturn_t r = a.nvmlDeviceGetUUID(d, buf, sizeof buf); r != kNvmlSuccess)
      return Unavailable(a.Err("nvmlDeviceGetUUID", r));
    g.uuid = buf;
    if (a.nvmlDeviceGetName(d, buf, sizeof buf) == kNvmlSuccess) g.model = buf;
    nvmlMemory_t mem{};
    if (a.nvmlDeviceGetMemoryInfo(d, &mem) == kNvmlSuccess) g.memory_mib = mem.total >> 20;
    unsigned minor = 0;
    if (a.nvmlDeviceGetMinorNumber(d, &minor) == kNvmlSuccess) g.minor = minor;
    nvmlPciInfo_t pci{};
    if (a.nvmlDeviceGetPciInfo_v3(d, &pci) == kNvmlSuccess) g.pci_bus_id = pci.busId;
    unsigned cur = 0, pending = 0;
    if (a.nvmlDeviceGetMigMode && a.nvmlDeviceGetMigMode(d, &cur, &pending) == kNvmlSuccess)
      g.mig_enabled = cur == kNvmlDeviceMigEnable;
    if (g.mig_enabled) g.mig = ReadMig(a, d, FindMigModelFor(g.model, g.memory_mib));
    out.push_back(std::move(g));
  }
  return out;
}

Status NvmlGpuBackend::ConfigureMig(uint32_t index, const std::vector<MigPlacement>& create,
                                    const std::vector<std::string>& destroy) {
  const Api& a = *api_;
  if (index >= a.devices.size()) return InvalidArgument("no GPU " + std::to_string(index));
  if (!a.nvmlDeviceCreateGpuInstanceWithPlacement || !a.nvmlGpuInstanceDestroy ||
      !a.nvmlGpuInstanceCreateComputeInstance)
    return FailedPrecondition("this NVML has no MIG instance management");
  auto gpus = Discover();
  if (!gpus.ok()) return gpus.status();
  const GpuInfo& g = (*gpus)[index];
  if (!g.mig_enabled) return FailedPrecondition("GPU " + std::to_string(index) + " is not in MIG mode");
  const MigModel* model = FindMigModelFor(g.model, g.memory_mib);
  if (!model) return FailedPrecondition("no MIG profile table for '" + g.model + "'");
  std::vector<MigPlacement> layout;
  std::vector<uint32_t> doomed;
  for (const auto& m : g.mig) {
    bool gone = false;
    for (const auto& u : destroy) gone = gone || u == m.uuid;
    if (gone) doomed.push_back(m.gpu_instance_id);
    else layout.push_back({m.profile, m.start});
  }
  if (doomed.size() != destroy.size()) return NotFound("a MIG instance to destroy does not exist");
  layout.insert(layout.end(), create.begin(), create.end());
  TESSERA_RETURN_IF_ERROR(ValidateMigLayout(*model, layout));
  nvmlDevice_t dev = a.devices[index];
  for (unsigned q = 0; q < kNvmlGpuInstanceProfileCount && !doomed.empty(); ++q) {
    nvmlGpuInstanceProfileInfo_t info{};
    if (a.nvmlDeviceGetGpuInstanceProfileInfo(dev, q, &info) != 0) continue;
    std::vector<nvmlGpuInstance_t> gis(8);
    unsigned count = 0;
    if (a.nvmlDeviceGetGpuInstances(dev, info.id, gis.data(), &count) != 0) continue;
    for (unsigned k = 0; k < count; ++k) {
      nvmlGpuInstanceInfo_t gi{};
      if (a.nvmlGpuInstanceGetInfo(gis[k], &gi) != 0) continue;
      if (std::find(doomed.begin(), doomed.end(), gi.id) == doomed.end()) continue;
      std::vector<nvmlComputeInstance_t> cis(8);
      unsigned nci = 0;
      for (unsigned cp = 0; cp < 8; ++cp)
        if (a.nvmlGpuInstanceGetComputeInstances(gis[k], cp, cis.data(), &nci) == 0)
          for (unsigned c = 0; c < nci; ++c) a.nvmlComputeInstanceDestroy(cis[c]);
      if (nvmlReturn_t r = a.nvmlGpuInstanceDestroy(gis[k]); r != kNvmlSuccess)
        return Internal(a.Err("nvmlGpuInstanceDestroy", r));
    }
  }
  for (const auto& c : create) {
    const MigProfile* p = FindMigProfile(*model, c.profile);
    nvmlGpuInstanceProfileInfo_t info{};
    if (nvmlReturn_t r = a.nvmlDeviceGetGpuInstanceProfileInfo(dev, p->nvml_profile, &info); r)
      return Internal(a.Err("nvmlDeviceGetGpuInstanceProfileInfo", r));
    nvmlGpuInstancePlacement_t pl{c.start, p->memory_slices};
    nvmlGpuInstance_t gi = nullptr;
    if (nvmlReturn_t r = a.nvmlDeviceCreateGpuInstanceWithPlacement(dev, info.id, &pl, &gi); r)
      return Internal(a.Err("nvmlDeviceCreateGpuInstanceWithPlacement", r));
    nvmlComputeInstanceProfileInfo_t ci{};
    int cprof = FullComputeProfile(p->compute);
    if (cprof < 0 || a.nvmlGpuInstanceGetComputeInstanceProfileInfo(gi, cprof, 0, &ci) != 0)
      return Internal("no full compute instance profile for " + c.profile);
    nvmlComputeInstance_t cinst = nullptr;
    if (nvmlReturn_t r = a.nvmlGpuInstanceCreateComputeInstance(gi, ci.id, &cinst); r)
      return Internal(a.Err("nvmlGpuInstanceCreateComputeInstance", r));
  }
  return Status::Ok();
}

std::vector<GpuEvent> NvmlGpuBackend::PollEvents(int timeout_ms) {
  std::vector<GpuEvent> out;
  const Api& a = *api_;
  if (!a.events) return out;
  unsigned wait = static_cast<unsigned>(std::max(0, timeout_ms));
  for (int n = 0; n < 64; ++n) {
    nvmlEventData_t e{};
    nvmlReturn_t r = a.nvmlEventSetWait_v2(a.events, &e, wait);
    wait = 0;
    if (r == kNvmlErrorTimeout) break;
    uint32_t index = 0;
    for (size_t i = 0; i < a.devices.size(); ++i)
      if (a.devices[i] == e.device) index = static_cast<uint32_t>(i);
    if (r == kNvmlErrorGpuIsLost) {
      out.push_back({index, 0, true});
      break;
    }
    if (r != kNvmlSuccess) break;
    if (e.eventType & kNvmlEventTypeXidCriticalError)
      out.push_back({index, static_cast<uint32_t>(e.eventData), false});
  }
  return out;
}

}  // namespace tessera::noded
