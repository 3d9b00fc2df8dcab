#include "ctld/config_loader.h"

#include "common/config_check.h"
#include "common/config_file.h"
#include "ctld/sched/registry.h"

namespace tessera::ctld {

Result<LoadedConfig> LoadConfig(const std::string& path) {
  auto cluster = LoadClusterConfig(path);
  if (!cluster.ok()) return cluster.status();
  // topology.conf (issue 15): read here, by ctld only; an error refuses the whole config.
  if (cluster->topology_kind != TopologyKind::kFlat) {
    std::vector<std::string> names;
    names.reserve(cluster->nodes.size());
    for (const auto& n : cluster->nodes) names.push_back(n.name);
    auto topo = LoadTopologyConfig(cluster->topology_file, cluster->topology_kind, names);
    if (!topo.ok()) return topo.status();
    for (const auto& w : topo->warnings) cluster->warnings.push_back(w);
    cluster->topology = std::make_shared<const TopologyConfig>(std::move(*topo));
  }
  auto lines = ParseConfigFile(path);
  if (!lines.ok()) return lines.status();
  auto sched_cfg = sched::BuildSchedConfig(*lines);
  if (!sched_cfg.ok()) return sched_cfg.status();
  LoadedConfig out;
  out.warnings = sched::ConfigWarnings(cluster->warnings, *sched_cfg);
  out.cluster = std::make_shared<ClusterConfig>(std::move(*cluster));
  out.sched = std::make_shared<sched::SchedConfig>(std::move(*sched_cfg));
  return out;
}

std::vector<std::string> CheckLaterRefusals(const LoadedConfig& cfg) {
  std::vector<std::string> out;
  const sched::SchedConfig& s = *cfg.sched;
  if (!s.qos.empty() && !s.FindQos("")) {
    std::string names, where;
    for (const auto& [name, q] : s.qos) {
      names += (names.empty() ? "" : ", ") + name;
      if (where.empty() || q.where < where) where = q.where;
    }
    out.push_back(where + ": QOS lines define " + names + " but none is Default=yes or named " +
                  s.default_qos + ": every job submitted without --qos would be refused " +
                  "(\"invalid qos specification\")");
  }
  for (auto& p : CheckGresMig(*cfg.cluster)) out.push_back(std::move(p));
  return out;
}

}  // namespace tessera::ctld
