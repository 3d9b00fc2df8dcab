#include "sim/topology.h"

#include <algorithm>
#include <functional>
#include <iomanip>
#include <memory>
#include <set>

#include "ctld/sched/topology.h"

namespace tessera::sim {
namespace {

Result<std::vector<uint32_t>> Numbers(const std::string& spec, const std::string& list,
                                      size_t want) {
  std::vector<uint32_t> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
        item.size() > 6 || std::stoul(item) == 0)
      return InvalidArgument("--gen-topology " + spec + ": \"" + item +
                             "\" is not a positive count");
    out.push_back(static_cast<uint32_t>(std::stoul(item)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (out.size() != want)
    return InvalidArgument("--gen-topology " + spec + ": expected " + std::to_string(want) +
                           " count(s)");
  return out;
}

TopologyConfig FatTree(const std::vector<std::string>& nodes, uint32_t leaf, uint32_t spine) {
  TopologyConfig cfg;
  cfg.kind = TopologyKind::kTree;
  size_t n_leaves = (nodes.size() + leaf - 1) / leaf;
  TopologySwitch core;
  core.name = "core";
  for (size_t l = 0; l < n_leaves; ++l) {
    if (l % spine == 0) {
      TopologySwitch sp;
      sp.name = "spine" + std::to_string(l / spine);
      core.switches.push_back(sp.name);
      cfg.switches.push_back(std::move(sp));
    }
    TopologySwitch lf;
    lf.name = "leaf" + std::to_string(l);
    for (size_t i = l * leaf; i < std::min(nodes.size(), (l + 1) * leaf); ++i)
      lf.nodes.push_back(nodes[i]);
    // The spine of this leaf is the last spine pushed; find it by name.
    std::string sp_name = "spine" + std::to_string(l / spine);
    for (auto& s : cfg.switches)
      if (s.name == sp_name) s.switches.push_back(lf.name);
    cfg.switches.push_back(std::move(lf));
  }
  cfg.switches.push_back(std::move(core));
  return cfg;
}

TopologyConfig Blocks(const std::vector<std::string>& nodes, uint32_t size) {
  TopologyConfig cfg;
  cfg.kind = TopologyKind::kBlock;
  for (size_t b = 0; b * size < nodes.size(); ++b) {
    TopologyBlock blk;
    blk.name = "block" + std::to_string(b);
    for (size_t i = b * size; i < std::min(nodes.size(), (b + 1) * size); ++i)
      blk.nodes.push_back(nodes[i]);
    cfg.blocks.push_back(std::move(blk));
  }
  for (uint64_t s = size;; s *= 2) {  // up to the first size that covers every node
    cfg.block_sizes.push_back(static_cast<uint32_t>(s));
    if (s >= nodes.size()) break;
  }
  return cfg;
}

}  // namespace

Result<TopologyConfig> GenerateTopology(const std::string& spec,
                                        const std::vector<std::string>& nodes) {
  size_t colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  std::string args = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (kind == "fat-tree") {
    auto n = Numbers(spec, args, 2);
    if (!n.ok()) return n.status();
    return FatTree(nodes, (*n)[0], (*n)[1]);
  }
  if (kind == "block") {
    auto n = Numbers(spec, args, 1);
    if (!n.ok()) return n.status();
    return Blocks(nodes, (*n)[0]);
  }
  return InvalidArgument("--gen-topology " + spec + ": expected fat-tree:L,S or block:B");
}

Status ApplyTopologyArgs(const std::map<std::string, std::string>& args,
                         sched::ClusterSnapshot* cluster, std::vector<std::string>* warnings) {
  auto has = [&](const char* k) { return args.count(k) > 0; };
  if (has("topology") && has("gen-topology"))
    return InvalidArgument("give --topology FILE or --gen-topology SPEC, not both");
  if (has("topology-plugin") && !has("topology"))
    return InvalidArgument("--topology-plugin needs --topology FILE");
  std::vector<std::string> names;
  for (const auto& n : cluster->nodes) names.push_back(n.name);
  Result<TopologyConfig> cfg = TopologyConfig{};
  if (has("topology")) {
    if (!has("topology-plugin"))
      return InvalidArgument("--topology needs --topology-plugin topology/tree|topology/block");
    auto kind = ParseTopologyPlugin(args.at("topology-plugin"));
    if (!kind.ok()) return kind.status();
    cfg = LoadTopologyConfig(args.at("topology"), *kind, names);
  } else if (has("gen-topology")) {
    cfg = GenerateTopology(args.at("gen-topology"), names);
  } else {
    return has("topology-mode") ? InvalidArgument("--topology-mode needs a topology") : Status::Ok();
  }
  if (!cfg.ok()) return cfg.status();
  if (cfg->kind == TopologyKind::kFlat) return Status::Ok();
  *warnings = cfg->warnings;
  cluster->topology = std::make_shared<const sched::TopologySnap>(
      sched::BuildTopologySnap(*cfg, names));
  if (has("topology-mode")) {
    const std::string& mode = args.at("topology-mode");
    if (mode != "required" && mode != "preferred")
      return InvalidArgument("--topology-mode: required or preferred, not " + mode);
    for (auto& p : cluster->partitions) p.topology_required = mode == "required";
  }
  return Status::Ok();
}

bool IsTopologyVariant(const std::string& name) {
  return name == "topo-aware" || name == "topo-blind";
}

SpreadMetrics ComputeSpread(const SimRun& run, const sched::TopologySnap& topo) {
  SpreadMetrics m;
  m.label = run.label;
  // Place sizes, largest first, for "needed".
  std::vector<size_t> sizes;
  if (topo.kind == TopologyKind::kTree) {
    for (const auto& s : topo.switches)
      if (!s.nodes.empty()) sizes.push_back(s.nodes.size());
  } else {
    for (const auto& b : topo.blocks) sizes.push_back(b.nodes.size());
  }
  std::sort(sizes.begin(), sizes.end(), std::greater<size_t>());
  double sum_ratio = 0, sum_extra = 0;
  for (const auto& j : run.jobs) {
    if (j.start < 0 || j.nodes.size() < 2) continue;
    std::set<int64_t> used;
    for (uint32_t n : j.nodes) {
      int32_t leaf = n < topo.node_leaf.size() ? topo.node_leaf[n] : -1;
      used.insert(leaf >= 0 ? leaf : -1 - static_cast<int64_t>(n));  // unplaced: its own place
    }
    size_t needed = 0, held = 0;
    while (held < j.nodes.size() && needed < sizes.size()) held += sizes[needed++];
    if (held < j.nodes.size()) needed += j.nodes.size() - held;
    needed = std::max<size_t>(1, needed);
    ++m.multi_node;
    double ratio = double(used.size()) / double(needed);
    if (used.size() > needed) ++m.over;
    sum_ratio += ratio;
    sum_extra += double(used.size()) - double(needed);
    if (ratio > m.worst_ratio) {
      m.worst_ratio = ratio;
      m.worst_used = used.size();
      m.worst_needed = needed;
    }
  }
  if (m.multi_node) {
    m.mean_ratio = sum_ratio / double(m.multi_node);
    m.mean_extra = sum_extra / double(m.multi_node);
  }
  return m;
}

void PrintSpreadTable(std::ostream& out, const std::vector<SpreadMetrics>& runs) {
  out << std::left << std::setw(14) << "topology" << std::right << std::setw(12) << "multi_node"
      << std::setw(12) << "over_spread" << std::setw(12) << "mean_ratio" << std::setw(12)
      << "mean_extra" << std::setw(18) << "worst(used/need)" << "\n";
  for (const auto& m : runs) {
    out << std::left << std::setw(14) << m.label << std::right << std::setw(12) << m.multi_node
        << std::setw(12) << m.over << std::setw(12) << std::fixed << std::setprecision(3)
        << m.mean_ratio << std::setw(12) << m.mean_extra << std::setw(18)
        << (std::to_string(m.worst_used) + "/" + std::to_string(m.worst_needed)) << "\n";
  }
}

}  // namespace tessera::sim
