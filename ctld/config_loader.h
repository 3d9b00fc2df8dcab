#pragma once
// Loads and validates everything ctld reads from tessera.conf: the cluster (common/) and the
// scheduler's part (ctld/sched), and topology.conf when TopologyPlugin= names a topology
// (ClusterConfig::topology). Either all are valid or the load fails with "file:line: ...".
#include <memory>
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "common/status.h"
#include "ctld/sched/sched_config.h"

namespace tessera::ctld {

struct LoadedConfig {
  std::shared_ptr<const ClusterConfig> cluster;
  std::shared_ptr<const sched::SchedConfig> sched;
  std::vector<std::string> warnings;
};

Result<LoadedConfig> LoadConfig(const std::string& path);

}  // namespace tessera::ctld
