#pragma once
// topology.conf (Slurm syntax; issue 15), selected in tessera.conf by TopologyPlugin=:
//   topology/tree   SwitchName=leaf0 Nodes=n[0-15] [LinkSpeed=N]
//                   SwitchName=spine0 Switches=leaf[0-1]
//   topology/block  BlockName=b0 Nodes=n[0-17]
//                   BlockSizes=18,36          (nodes per aggregated block; see Slurm's topology.conf)
//   topology/flat, topology/default or no TopologyPlugin: no topology (the file is not read).
// The file lies beside tessera.conf (TopologyFile= may name another path).
//
// Contract: loading succeeds with a complete, validated TopologyConfig plus warnings (a node of
// tessera.conf with no place in the topology, a key Tessera does not act on: each warning names
// the node or key and file:line), or fails with the first error as "file:line: message"
// (unknown node, a node in two leaves or two blocks, an unknown or repeated switch, a cycle in
// the switch tree, a line of the other plugin's form). Nothing is half-applied.
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera {

enum class TopologyKind { kFlat, kTree, kBlock };

// "topology/tree" | "topology/block" | "topology/flat" | "topology/default" | "" (flat).
Result<TopologyKind> ParseTopologyPlugin(const std::string& text);
const char* TopologyPluginName(TopologyKind kind);

struct TopologySwitch {
  std::string name;
  std::vector<std::string> nodes;     // Nodes= (expanded hostlist); leaves have nodes
  std::vector<std::string> switches;  // Switches= (expanded); children switch names
  uint64_t link_speed = 0;            // LinkSpeed= (kept for display; 0 = unset)
  std::string where;                  // file:line
};

struct TopologyBlock {
  std::string name;
  std::vector<std::string> nodes;     // expanded, in file order
  std::string where;
};

struct TopologyConfig {
  TopologyKind kind = TopologyKind::kFlat;
  std::string path;                   // the file read ("" when flat)
  std::vector<TopologySwitch> switches;  // kTree, in file order
  std::vector<TopologyBlock> blocks;     // kBlock, in file order
  std::vector<uint32_t> block_sizes;     // kBlock, ascending; Slurm's default when not given
  std::vector<std::string> warnings;
};

// Parses `text` (read from `path`, for messages) as topology of `kind`; `node_names` are the
// nodes of tessera.conf. kFlat returns an empty config.
Result<TopologyConfig> ParseTopologyConfig(const std::string& text, const std::string& path,
                                           TopologyKind kind,
                                           const std::vector<std::string>& node_names);
// Reads and parses `path`; a missing file with kTree/kBlock is an error naming the path.
Result<TopologyConfig> LoadTopologyConfig(const std::string& path, TopologyKind kind,
                                          const std::vector<std::string>& node_names);

}  // namespace tessera
