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

// What a loaded config would make ctld or noded refuse later (issue 21 §2), "file:line: ..."
// each: QOS lines none of which is the default (Default=yes, or one named normal) — every job
// without --qos would be refused "invalid qos specification" —, a partition whose time limit for
// jobs without --time is above its MaxTime or the default QoS's MaxWall, and gres.conf's MIG keys
// (common/config_check.h). `tessera-ctld --check-config` exits 1 on any; a normal start warns.
std::vector<std::string> CheckLaterRefusals(const LoadedConfig& cfg);

}  // namespace tessera::ctld
