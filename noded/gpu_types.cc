#include "noded/gpu_types.h"

#include "common/config_file.h"
#include "common/mig_profiles.h"

namespace tessera::noded {
namespace {

std::string Key(const std::string& name) {
  std::string k = ToLower(name);
  if (k.rfind("nvidia ", 0) == 0) k = k.substr(7);
  return k;
}

}  // namespace

std::string MatchConfiguredType(const std::string& reported, uint64_t memory_mib,
                                const std::vector<std::string>& types) {
  std::string name = Key(reported);
  const MigModel* table = FindMigModelFor(reported, memory_mib);
  std::string by_table, by_substring;
  for (const auto& t : types) {
    std::string k = Key(t);
    if (k.empty()) continue;
    if (k == name) return t;
    const MigModel* tt = FindMigModel(t);  // a configured type names its size itself
    if (table && tt == table && by_table.empty()) by_table = t;
    if (name.find(k) != std::string::npos && k.size() > Key(by_substring).size()) by_substring = t;
  }
  return by_table.empty() ? by_substring : by_table;
}

std::vector<std::string> ApplyConfiguredTypes(std::vector<GpuInfo>& gpus,
                                              const std::vector<GpuDecl>& decls) {
  std::vector<std::string> types, notes;
  std::string where;
  for (const auto& d : decls) {
    if (d.simulated || d.model.empty()) continue;  // untyped lines take any name
    types.push_back(d.model);
    where += (where.empty() ? "" : ", ") + d.model + " at " + d.where;
  }
  if (types.empty()) return notes;
  for (auto& g : gpus) {
    if (g.simulated) continue;
    std::string t = MatchConfiguredType(g.model, g.memory_mib, types);
    std::string gpu = "GPU " + std::to_string(g.index);
    if (t.empty()) {
      notes.push_back("warning: " + gpu + ": NVML reports '" + g.model +
                      "', which matches no Type= configured for this node in gres.conf (" +
                      where + "); it keeps NVML's name and requests for a configured type "
                      "will not use it");
    } else if (t != g.model) {
      notes.push_back(gpu + ": NVML name '" + g.model + "' is gres.conf Type=" + t);
      g.model = t;
    }
  }
  return notes;
}

}  // namespace tessera::noded
