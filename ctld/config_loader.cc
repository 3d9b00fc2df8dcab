#include "ctld/config_loader.h"

#include "common/config_file.h"
#include "ctld/sched/registry.h"

namespace tessera::ctld {

Result<LoadedConfig> LoadConfig(const std::string& path) {
  auto cluster = LoadClusterConfig(path);
  if (!cluster.ok()) return cluster.status();
  auto lines = ParseConfigFile(path);
  if (!lines.ok()) return lines.status();
  auto sched_cfg = sched::BuildSchedConfig(*lines);
  if (!sched_cfg.ok()) return sched_cfg.status();
  LoadedConfig out;
  out.warnings = cluster->warnings;
  for (const auto& w : sched_cfg->warnings) out.warnings.push_back(w);
  out.cluster = std::make_shared<ClusterConfig>(std::move(*cluster));
  out.sched = std::make_shared<sched::SchedConfig>(std::move(*sched_cfg));
  return out;
}

}  // namespace tessera::ctld
