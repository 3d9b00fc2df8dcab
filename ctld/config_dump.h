#pragma once
// Issue 19 (h19): `scontrol show config` from the running controller. Every parameter ctld
// uses, under Slurm's key names where Slurm has the parameter (Tessera's own keys under their
// tessera.conf names), with values as Slurm prints them ("30 sec", "7-00:00:00", "root(0)").
// Pure: the configuration ctld runs with in, (key, value) pairs in key order out.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/cluster_config.h"
#include "ctld/sched/sched_config.h"

namespace tessera::ctld {

using ConfigEntries = std::vector<std::pair<std::string, std::string>>;

// `cluster_uid`: the uid of the configured SlurmUser (-1 when it has none), printed as
// "name(uid)" as Slurm does.
ConfigEntries DumpConfig(const ClusterConfig& c, const sched::SchedConfig& s, int64_t cluster_uid);

}  // namespace tessera::ctld
