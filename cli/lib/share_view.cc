#include "cli/lib/share_view.h"

#include <cstdint>

namespace tessera::cli {
namespace {
constexpr uint32_t kMpsPerGpu = 100;
// The GPU's gres/mps count (gres.conf Name=mps Count=; 100 by default).
uint32_t MpsTotal(const tessera::v1::GpuDevice& g) {
  return !g.mps() ? 0 : g.mps_count() ? g.mps_count() : kMpsPerGpu;
}
}

std::string ShareGres(const tessera::v1::NodeInfo& node) {
  uint32_t mps = 0, shards = 0;
  for (const auto& g : node.gpus()) {
    if (g.mig_enabled()) continue;
    mps += MpsTotal(g);
    shards += g.replicas();
  }
  std::string out;
  if (mps) out = "mps:" + std::to_string(mps);
  if (shards) out += (out.empty() ? "" : ",") + std::string("shard:") + std::to_string(shards);
  return out;
}

std::string ShareGresUsed(const tessera::v1::NodeInfo& node) {
  uint32_t mps = 0, shards = 0, mps_total = 0, shard_total = 0;
  std::string mps_idx, shard_idx;
  for (const auto& g : node.gpus()) {
    mps_total += MpsTotal(g);
    shard_total += g.replicas();
    if (g.mps_used()) {
      mps += g.mps_used();
      mps_idx += (mps_idx.empty() ? "" : ",") + std::to_string(g.index());
    }
    if (g.shards_used()) {
      shards += g.shards_used();
      shard_idx += (shard_idx.empty() ? "" : ",") + std::to_string(g.index());
    }
  }
  std::string out;
  if (mps_total)
    out = "mps:" + std::to_string(mps) + (mps_idx.empty() ? "" : "(IDX:" + mps_idx + ")");
  if (shard_total)
    out += (out.empty() ? "" : ",") + std::string("shard:") + std::to_string(shards) +
           (shard_idx.empty() ? "" : "(IDX:" + shard_idx + ")");
  return out;
}

std::string ShareOfGpu(const tessera::v1::GpuDevice& g) {
  std::string i = std::to_string(g.index());
  if (g.mps_used())
    return i + ":mps[" + std::to_string(g.mps_used()) + "/" + std::to_string(MpsTotal(g)) + "]";
  if (g.shards_used())
    return i + ":shard[" + std::to_string(g.shards_used()) + "/" + std::to_string(g.replicas()) +
           "]";
  return "";
}

}  // namespace tessera::cli
