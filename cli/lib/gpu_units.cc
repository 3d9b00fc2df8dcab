#include "cli/lib/gpu_units.h"

#include <algorithm>
#include <map>

namespace tessera::cli {

namespace pb = ::tessera::v1;

std::vector<GpuUnitCount> GpuUnitsOfNode(const pb::NodeInfo& node) {
  std::map<std::string, GpuUnitCount> by;
  for (const auto& g : node.gpus()) {
    if (g.mig_enabled()) {
      for (const auto& m : g.mig_instances()) {
        auto& u = by[m.profile()];
        ++u.total;
        u.used += m.in_use_by_job() != 0;
      }
      continue;
    }
    auto& u = by[g.model()];
    ++u.total;
    u.used += std::find(node.alloc_gpu_indices().begin(), node.alloc_gpu_indices().end(),
                        g.index()) != node.alloc_gpu_indices().end();
  }
  std::vector<GpuUnitCount> out;
  for (auto& [name, u] : by) {
    u.name = name;
    out.push_back(u);
  }
  return out;
}

std::string GpuUnitsText(const std::vector<GpuUnitCount>& units, bool used) {
  std::string out;
  for (const auto& u : units)
    out += (out.empty() ? "gpu:" : ",gpu:") + (u.name.empty() ? "" : u.name + ":") +
           std::to_string(used ? u.used : u.total);
  return out;
}

std::string MigLayoutText(const pb::GpuDevice& gpu) {
  if (!gpu.mig_enabled()) return "";
  std::string out;
  for (const auto& m : gpu.mig_instances())
    out += (out.empty() ? "" : ",") + m.profile() + "@" + std::to_string(m.placement_start()) +
           "(" + m.uuid() + "," +
           (m.in_use_by_job() ? "job " + std::to_string(m.in_use_by_job()) : "free") + ")";
  return out.empty() ? "none" : out;
}

}  // namespace tessera::cli
