#include "ctld/topology_live.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "common/hostlist.h"
#include "ctld/sched/topology.h"

namespace tessera::ctld {
namespace {

// Names of `set` in tessera.conf's node order, compressed (Slurm's bitmap2node_name).
std::string InNodeOrder(const ClusterConfig& cfg, const std::set<std::string>& set) {
  std::vector<std::string> out;
  for (const auto& n : cfg.nodes)
    if (set.count(n.name)) out.push_back(n.name);
  return CompressHostlist(out);
}

// Slurm's switch levels: a switch without children is a leaf (0); others are one above their
// highest child. The parser refused cycles.
void SwitchRecords(const TopologyConfig& topo, const ClusterConfig& cfg,
                   std::vector<TopologyRecord>* out) {
  std::map<std::string, const TopologySwitch*> by_name;
  for (const auto& sw : topo.switches) by_name.emplace(sw.name, &sw);
  std::map<std::string, std::pair<uint32_t, std::set<std::string>>> memo;  // level, nodes below
  std::function<const std::pair<uint32_t, std::set<std::string>>&(const TopologySwitch&)> below =
      [&](const TopologySwitch& sw) -> const std::pair<uint32_t, std::set<std::string>>& {
    if (auto it = memo.find(sw.name); it != memo.end()) return it->second;
    std::pair<uint32_t, std::set<std::string>> v{0, {sw.nodes.begin(), sw.nodes.end()}};
    for (const auto& c : sw.switches) {
      const auto& child = below(*by_name.at(c));
      v.first = std::max(v.first, child.first + 1);
      v.second.insert(child.second.begin(), child.second.end());
    }
    return memo.emplace(sw.name, std::move(v)).first->second;
  };
  for (const auto& sw : topo.switches) {
    const auto& [level, nodes] = below(sw);
    TopologyRecord r;
    r.kind = "SwitchName";
    r.name = sw.name;
    r.level = level;
    r.link_speed = sw.link_speed ? static_cast<uint32_t>(sw.link_speed) : 1;
    r.nodes = InNodeOrder(cfg, nodes);
    r.switches = CompressHostlist(sw.switches);
    out->push_back(std::move(r));
  }
}

// Base blocks, then Slurm's aggregated blocks (block_record.c): at each BlockSizes level j
// (size / base = 2^k blocks), blocks i..i+2^k-1 for i a multiple of 2^k form one aggregate,
// unless fewer blocks remain than the level needs and the level below already covers them.
void BlockRecords(const TopologyConfig& topo, const ClusterConfig& cfg,
                  std::vector<TopologyRecord>* out) {
  if (topo.block_sizes.empty()) return;
  uint32_t base = topo.block_sizes[0];
  std::vector<uint32_t> per;  // blocks per aggregate at each level
  for (uint32_t s : topo.block_sizes) per.push_back(s / base);
  size_t nb = topo.blocks.size();
  for (size_t i = 0; i < nb; ++i) {
    const auto& b = topo.blocks[i];
    out->push_back({"BlockName", b.name, 0, 1, CompressHostlist(b.nodes), "",
                    static_cast<uint32_t>(i), base});
  }
  struct Agg {
    uint32_t level, index;
    std::vector<std::string> names;
    std::set<std::string> nodes;
  };
  std::vector<Agg> aggs;
  std::vector<int> current(per.size(), -1);
  uint32_t next_index = static_cast<uint32_t>(nb);
  for (size_t i = 0; i < nb; ++i) {
    const auto& b = topo.blocks[i];
    for (size_t j = 1; j < per.size(); ++j) {
      if (i % per[j] == 0) {
        size_t remaining = nb - i;
        if (per[j] > remaining && per[j - 1] >= remaining) {
          current[j] = -1;
          continue;
        }
        current[j] = static_cast<int>(aggs.size());
        aggs.push_back({static_cast<uint32_t>(j), next_index++, {}, {}});
      } else if (current[j] < 0) {
        continue;
      }
      auto& a = aggs[static_cast<size_t>(current[j])];
      a.names.push_back(b.name);
      a.nodes.insert(b.nodes.begin(), b.nodes.end());
    }
  }
  std::stable_sort(aggs.begin(), aggs.end(),
                   [](const Agg& x, const Agg& y) { return x.level < y.level; });
  for (const auto& a : aggs)
    out->push_back({"AggregatedBlock", CompressHostlist(a.names), a.level, 1,
                    InNodeOrder(cfg, a.nodes), "", a.index, topo.block_sizes[a.level]});
}

}  // namespace

std::shared_ptr<const LiveTopology> BuildLiveTopology(const ClusterConfig& cfg) {
  auto live = std::make_shared<LiveTopology>();
  if (!cfg.topology || cfg.topology->kind == TopologyKind::kFlat) return live;
  live->kind = cfg.topology->kind;
  live->config = cfg.topology;
  std::vector<std::string> names;
  names.reserve(cfg.nodes.size());
  for (const auto& n : cfg.nodes) names.push_back(n.name);
  live->snap = std::make_shared<const sched::TopologySnap>(
      sched::BuildTopologySnap(*cfg.topology, names));
  for (const auto& sw : cfg.topology->switches)
    for (const auto& n : sw.nodes) live->unit_of_node.emplace(n, sw.name);
  for (const auto& b : cfg.topology->blocks)
    for (const auto& n : b.nodes) live->unit_of_node.emplace(n, b.name);
  return live;
}

std::vector<TopologyRecord> TopologyRecords(const TopologyConfig& topo, const ClusterConfig& cfg) {
  std::vector<TopologyRecord> out;
  if (topo.kind == TopologyKind::kTree) SwitchRecords(topo, cfg, &out);
  if (topo.kind == TopologyKind::kBlock) BlockRecords(topo, cfg, &out);
  return out;
}

std::string FormatTopologyRecord(const TopologyRecord& r) {
  if (r.kind == "SwitchName") {
    std::string line = "SwitchName=" + r.name + " Level=" + std::to_string(r.level) +
                       " LinkSpeed=" + std::to_string(r.link_speed);
    if (!r.nodes.empty()) line += " Nodes=" + r.nodes;
    if (!r.switches.empty()) line += " Switches=" + r.switches;
    return line;
  }
  std::string line = r.kind + "=" + r.name + " BlockIndex=" + std::to_string(r.block_index);
  if (!r.nodes.empty()) line += " Nodes=" + r.nodes;
  return line + " BlockSize=" + std::to_string(r.block_size);
}

int64_t SwitchWaitSeconds(const JobSpec& spec) {
  if (spec.switches == 0) return 0;
  if (spec.switches_wait_s <= 0) return kMaxSwitchWaitS;
  return std::min(spec.switches_wait_s, kMaxSwitchWaitS);
}

Status CheckSegmentRequest(const LiveTopology& topo, const JobSpec& spec,
                           const PartitionConfig& part) {
  if (spec.segment == 0) return Status::Ok();
  std::string seg = "--segment=" + std::to_string(spec.segment);
  if (topo.kind != TopologyKind::kBlock)
    return InvalidArgument(seg + " needs a block topology (TopologyPlugin=topology/block); this "
                           "cluster uses " + TopologyPluginName(topo.kind));
  std::set<std::string> in_part(part.nodes.begin(), part.nodes.end());
  size_t largest = 0;
  std::string largest_name;
  for (const auto& b : topo.config->blocks) {
    size_t n = std::count_if(b.nodes.begin(), b.nodes.end(),
                             [&](const std::string& x) { return in_part.count(x) > 0; });
    if (n > largest) largest = n, largest_name = b.name;
  }
  if (spec.segment > largest)
    return InvalidArgument(seg + " can never be placed: no block has " +
                           std::to_string(spec.segment) + " nodes in partition " + part.name +
                           (largest ? " (the largest, " + largest_name + ", has " +
                                          std::to_string(largest) + ")"
                                    : " (none of its nodes is in a block)"));
  if (spec.nodes_min > 0 && spec.nodes_min % spec.segment != 0)
    return InvalidArgument(seg + " does not divide the job's " + std::to_string(spec.nodes_min) +
                           " nodes (-N): each segment has " + std::to_string(spec.segment) +
                           " nodes");
  return Status::Ok();
}

}  // namespace tessera::ctld
