#include "ctld/config_loader.h"

#include "common/config_check.h"
#include "common/config_file.h"
#include "common/duration.h"
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
  // A partition's time limit for jobs without --time (DefaultTime, else MaxTime) that its
  // MaxTime or the default QoS's MaxWall refuses: every such job waits forever or is refused.
  const sched::QosConfig* def_qos = s.qos.empty() ? nullptr : s.FindQos("");
  for (const auto& part : cfg.cluster->partitions) {
    int64_t limit = part.default_time_s >= 0 ? part.default_time_s : part.max_time_s;
    if (part.default_time_s >= 0 && part.max_time_s >= 0 && part.default_time_s > part.max_time_s)
      out.push_back(part.where + ": partition " + part.name + " has DefaultTime " +
                    FormatDuration(part.default_time_s) + " above its MaxTime " +
                    FormatDuration(part.max_time_s) + ": every job submitted there without " +
                    "--time would " + (cfg.cluster->enforce_part_limits == "NO"
                                           ? "wait forever (PartitionTimeLimit)"
                                           : "be refused"));
    else if (def_qos && def_qos->max_wall > 0 && limit > def_qos->max_wall)
      out.push_back(part.where + ": partition " + part.name + " gives jobs without --time " +
                    FormatDuration(limit) + ", above the MaxWall " +
                    FormatDuration(def_qos->max_wall) + " of the default QOS " + def_qos->name +
                    " (" + def_qos->where + "): every such job without --qos would be refused " +
                    "(QOSMaxWallDurationPerJobLimit)");
  }
  for (auto& p : CheckGresMig(*cfg.cluster)) out.push_back(std::move(p));
  return out;
}

}  // namespace tessera::ctld
