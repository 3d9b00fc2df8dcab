#include "ctld/part_limits.h"

#include <algorithm>

namespace tessera::ctld {

bool OverPartitionTime(const PartitionConfig& part, int64_t limit_s) {
  return part.max_time_s >= 0 && (limit_s < 0 || limit_s > part.max_time_s);
}

std::vector<uint64_t> HoldOverPartitionTime(const ClusterConfig& cfg, sched::ClusterSnapshot& snap) {
  std::vector<uint64_t> held;
  auto over = [&](const sched::JobSnap& j) {
    const PartitionConfig* p = cfg.FindPartition(j.partition);
    if (!p || j.time_limit == 0 || !OverPartitionTime(*p, j.time_limit)) return false;
    held.push_back(j.id);
    return true;
  };
  snap.pending.erase(std::remove_if(snap.pending.begin(), snap.pending.end(), over),
                     snap.pending.end());
  return held;
}

}  // namespace tessera::ctld
