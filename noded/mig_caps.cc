#include "noded/mig_caps.h"

#include <fstream>
#include <sstream>

namespace tessera::noded {
namespace {

std::string CapDir(const std::string& proc_root, uint32_t gpu_minor, uint32_t gi) {
  return proc_root + "/driver/nvidia/capabilities/gpu" + std::to_string(gpu_minor) + "/mig/gi" +
         std::to_string(gi);
}

Result<int64_t> CapsMajor(const std::string& proc_root) {
  std::ifstream in(proc_root + "/devices");
  if (!in) return NotFound("cannot read " + proc_root + "/devices");
  std::string line;
  bool chars = false;
  while (std::getline(in, line)) {
    if (line.rfind("Character devices:", 0) == 0) chars = true;
    else if (line.rfind("Block devices:", 0) == 0) chars = false;
    std::istringstream w(line);
    int64_t major = -1;
    std::string name;
    if (chars && (w >> major >> name) && name == "nvidia-caps") return major;
  }
  return NotFound(proc_root + "/devices has no nvidia-caps character device");
}

Result<int64_t> FileMinor(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read " + path);
  std::string line;
  while (std::getline(in, line)) {
    const std::string key = "DeviceFileMinor:";
    if (line.rfind(key, 0) != 0) continue;
    std::string v = line.substr(key.size());
    v.erase(0, v.find_first_not_of(" \t"));
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 9)
      return InvalidArgument(path + ": bad DeviceFileMinor \"" + v + "\"");
    return static_cast<int64_t>(std::stoll(v));
  }
  return InvalidArgument(path + ": no DeviceFileMinor line");
}

}  // namespace

Result<std::vector<DeviceRule>> MigCapRules(const std::string& proc_root, uint32_t gpu_minor,
                                            uint32_t gi, uint32_t ci) {
  auto major = CapsMajor(proc_root);
  if (!major.ok()) return major.status();
  std::string dir = CapDir(proc_root, gpu_minor, gi);
  auto gi_minor = FileMinor(dir + "/access");
  if (!gi_minor.ok()) return gi_minor.status();
  auto ci_minor = FileMinor(dir + "/ci" + std::to_string(ci) + "/access");
  if (!ci_minor.ok()) return ci_minor.status();
  return std::vector<DeviceRule>{{'c', *major, *gi_minor, "rwm"}, {'c', *major, *ci_minor, "rwm"}};
}

std::vector<DeviceRule> SimulatedMigCapRules(const std::string& proc_root, uint32_t gpu_minor,
                                             uint32_t gi) {
  auto major = CapsMajor(proc_root);
  int64_t m = major.ok() ? *major : kSimulatedNvidiaCapsMajor;
  int64_t base = 1000 + 100 * int64_t{gpu_minor} + 2 * int64_t{gi};
  return {{'c', m, base, "rwm"}, {'c', m, base + 1, "rwm"}};
}

std::map<std::string, std::vector<DeviceRule>> MigDeviceRules(const std::vector<GpuInfo>& gpus,
                                                             const std::string& proc_root,
                                                             std::vector<std::string>* errors) {
  std::map<std::string, std::vector<DeviceRule>> out;
  for (const auto& g : gpus) {
    if (!g.mig_enabled) continue;
    for (const auto& m : g.mig) {
      auto r = MigCapRules(proc_root, g.minor, m.gpu_instance_id);
      if (r.ok()) {
        out[m.uuid] = *r;
      } else if (g.simulated) {
        out[m.uuid] = SimulatedMigCapRules(proc_root, g.minor, m.gpu_instance_id);
      } else if (errors) {
        errors->push_back("MIG instance " + m.uuid + " of GPU " + std::to_string(g.index) +
                          ": " + r.status().message() + " (its cgroup opens no nvidia-caps)");
      }
    }
  }
  return out;
}

}  // namespace tessera::noded
