#include "noded/gpu_backend.h"

#include <cstdio>

namespace tessera::noded {
namespace {

uint64_t Fnv1a(const std::string& s, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace

std::string SimulatedGpuUuid(const std::string& cluster, const std::string& node, uint32_t index) {
  std::string key = cluster + '\0' + node + '\0' + std::to_string(index);
  uint64_t hi = Fnv1a(key, 14695981039346656037ULL);
  uint64_t lo = Fnv1a(key + "#2", hi ^ 0x9e3779b97f4a7c15ULL);
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(hi >> 32), static_cast<unsigned>((hi >> 16) & 0xffff),
                static_cast<unsigned>(hi & 0xffff), static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

Result<std::vector<GpuInfo>> SimulatedGpuBackend::Discover() {
  std::vector<GpuInfo> out;
  for (const GpuDecl& d : decls_) {
    if (!d.simulated) continue;
    for (uint32_t i = 0; i < d.count; ++i) {
      GpuInfo g;
      g.index = static_cast<uint32_t>(out.size());
      g.uuid = SimulatedGpuUuid(cluster_, node_, g.index);
      g.model = d.model;
      g.memory_mib = d.memory_mib;
      g.simulated = true;
      g.healthy = true;
      out.push_back(std::move(g));
    }
  }
  return out;
}

}  // namespace tessera::noded
