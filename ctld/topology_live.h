#pragma once
// ctld's topology (issue 15), built once per configuration from ClusterConfig::topology (the
// topology.conf that ctld's LoadConfig read and validated):
//  - the scheduler's TopologySnap for the config's node order (the order of every snapshot's
//    nodes, SchedBridge::EmptyCluster), shared by every cycle until the next reconfigure;
//  - each node's leaf switch or block (tcontrol show node's Topology= line);
//  - the records of tcontrol show topology, in Slurm's scontrol show topology form;
//  - the submit check of --segment (busy vs never).
// Pure functions over the config; no I/O.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/cluster_config.h"
#include "common/status.h"
#include "common/topology_config.h"
#include "ctld/jobs/job.h"
#include "ctld/sched/snapshot.h"

namespace tessera::ctld {

struct LiveTopology {
  TopologyKind kind = TopologyKind::kFlat;
  std::shared_ptr<const TopologyConfig> config;     // null = flat
  std::shared_ptr<const sched::TopologySnap> snap;  // null = flat
  std::unordered_map<std::string, std::string> unit_of_node;  // leaf switch or block name
};

// From cfg.topology (null or kFlat: a flat LiveTopology) for cfg.nodes' order.
std::shared_ptr<const LiveTopology> BuildLiveTopology(const ClusterConfig& cfg);

// One record of Slurm's scontrol show topology (src/plugins/topology/{tree,block}):
//   SwitchName=s0 Level=0 LinkSpeed=1 Nodes=n[0-3]
//   SwitchName=s2 Level=1 LinkSpeed=1 Nodes=n[0-7] Switches=s[0-1]
//   BlockName=b1 BlockIndex=0 Nodes=n[0-3] BlockSize=4
//   AggregatedBlock=b[1-2] BlockIndex=2 Nodes=n[0-7] BlockSize=8
struct TopologyRecord {
  std::string kind;  // "SwitchName" | "BlockName" | "AggregatedBlock"
  std::string name;
  uint32_t level = 0;
  uint32_t link_speed = 1;  // Slurm's default when LinkSpeed= is not given
  std::string nodes;        // compressed hostlist ("" = none)
  std::string switches;     // children, compressed ("" = none)
  uint32_t block_index = 0;
  uint32_t block_size = 0;
};

// Every record, in Slurm's order (switches in file order; blocks in file order, then the
// aggregated blocks of each BlockSizes level, as Slurm's block_record.c builds them). A switch
// above leaves lists every node below it. Nodes print in tessera.conf's order.
std::vector<TopologyRecord> TopologyRecords(const TopologyConfig& topo, const ClusterConfig& cfg);
// Slurm's line for one record.
std::string FormatTopologyRecord(const TopologyRecord& r);

// Slurm's max_switch_wait (SchedulerParameters default, job_mgr.c): --switches=N waits at most
// this long; without @TIME the job waits this long.
inline constexpr int64_t kMaxSwitchWaitS = 300;
// The wait of --switches=N[@TIME] the scheduler applies (JobSnap::switches_wait_s): TIME capped
// at kMaxSwitchWaitS, kMaxSwitchWaitS when TIME was not given, 0 without --switches.
int64_t SwitchWaitSeconds(const JobSpec& spec);

// Submit check of --segment=N (Slurm's topology/block segments): refused when the cluster has no
// block topology, when no block has N nodes of the job's partition (never, not busy), or when N
// does not divide the job's -N node count. `spec.segment == 0` passes.
Status CheckSegmentRequest(const LiveTopology& topo, const JobSpec& spec,
                           const PartitionConfig& part);

}  // namespace tessera::ctld
