#pragma once
// sinfo's views, from ListPartitions + ListNodes answers:
//  - default: "%#P %.5a %.10l %.6D %.6t %N", one line per (partition, node state), partitions in
//    the controller's order, the default partition suffixed '*', node lists compressed;
//  - node-oriented (-N): "%#N %.6D %#P %6t", one line per (node, partition), by node name;
//  - reasons (-R): "%20E %9u %19H %N", one line per reason over down/drained/failed nodes.
// "%#" widths are sinfo's: the longest value, at least 9 columns.
#include <string>
#include <vector>

#include "tessera/v1/controller.pb.h"
#include "tessera/v1/types.pb.h"

namespace tessera::cli {

class IdNames;

struct InfoOptions {
  bool node_oriented = false;
  bool list_reasons = false;
  bool header = true;
  std::vector<std::string> partitions;  // empty = all
  const IdNames* names = nullptr;  // -R: the reason's user (uid as a number without it)
};

// sinfo's compact lower-case state: idle, mix, alloc, down, drain, drng, fail, unk.
std::string NodeStateCompact(tessera::v1::NodeState s);
// scontrol's state: IDLE, MIXED, ALLOCATED, DOWN, IDLE+DRAIN, MIXED+DRAIN, FAIL, UNKNOWN.
std::string NodeStateLong(const tessera::v1::NodeInfo& node);

std::string FormatInfo(const std::vector<tessera::v1::PartitionInfo>& partitions,
                       const std::vector<tessera::v1::NodeInfo>& nodes, const InfoOptions& opts);
// The default view (not -N, not -R) from ctld's node-state summary (ListNodes with
// state_summary, issue 20 §2): the same text FormatInfo prints from the node records.
std::string FormatInfoSummary(const std::vector<tessera::v1::PartitionInfo>& partitions,
                              const std::vector<tessera::v1::ListNodesResponse::StateGroup>& groups,
                              const InfoOptions& opts);

}  // namespace tessera::cli
