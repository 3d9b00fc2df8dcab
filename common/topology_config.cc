#include "common/topology_config.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "common/config_file.h"
#include "common/duration.h"
#include "common/hostlist.h"

namespace tessera {
namespace {

// Slurm's limits: switch names up to HOST_NAME_MAX (64) characters, 16 block levels.
constexpr size_t kMaxNameLen = 64;
constexpr uint32_t kMaxBlockLevels = 16;
// Slurm's default BlockSizes: the base block (the first block's node count) and 2, 4, 8, 16 of it.
constexpr uint32_t kDefaultBlockLevels = 5;

Status Err(const ConfigLine& l, const std::string& msg) {
  return InvalidArgument(l.Where() + ": " + msg);
}

Result<std::vector<std::string>> Expand(const ConfigLine& l, const ConfigPair& p) {
  auto names = ExpandHostlist(p.value);
  if (!names.ok()) return Err(l, p.raw_key + "=: " + names.status().message());
  return std::move(*names);
}

Status CheckName(const ConfigLine& l, const ConfigPair& p) {
  if (p.value.empty()) return Err(l, p.raw_key + " is empty");
  if (p.value.size() > kMaxNameLen)
    return Err(l, p.raw_key + "=" + p.value + " is longer than 64 characters");
  if (p.value.find_first_of(",[]") != std::string::npos)
    return Err(l, p.raw_key + "=" + p.value + " is not one name (no ',' or '[...]')");
  return Status::Ok();
}

class Parser {
 public:
  Parser(TopologyConfig* cfg, const std::vector<std::string>& node_names)
      : cfg_(cfg), known_(node_names.begin(), node_names.end()), node_names_(node_names) {}

  Status Line(const ConfigLine& l) {
    const std::string& head = l.Head();
    bool tree = cfg_->kind == TopologyKind::kTree;
    if (head == "switchname") {
      if (!tree) return WrongForm(l, "SwitchName= lines are topology/tree's form");
      return SwitchLine(l);
    }
    if (head == "blockname" || head == "blocksizes") {
      if (tree) return WrongForm(l, l.pairs[0].raw_key + "= lines are topology/block's form");
      return head == "blockname" ? BlockLine(l) : BlockSizesLine(l);
    }
    if (head == "ringname")
      return WrongForm(l, "RingName= lines are topology/ring's form, which Tessera does not have");
    cfg_->warnings.push_back(l.Where() + ": unknown topology.conf key " + l.pairs[0].raw_key +
                             "; line ignored");
    return Status::Ok();
  }

  Status Finish(const std::string& path) {
    if (cfg_->kind == TopologyKind::kTree) {
      if (cfg_->switches.empty())
        return InvalidArgument(path + ": no SwitchName= lines (topology/tree)");
      TESSERA_RETURN_IF_ERROR(CheckSwitches());
    } else {
      if (cfg_->blocks.empty())
        return InvalidArgument(path + ": no BlockName= lines (topology/block)");
      TESSERA_RETURN_IF_ERROR(FinishBlockSizes(path));
    }
    WarnUnplaced(path);
    return Status::Ok();
  }

 private:
  Status WrongForm(const ConfigLine& l, const std::string& what) {
    return Err(l, what + ", but TopologyPlugin=" + TopologyPluginName(cfg_->kind));
  }

  // Records where each node is placed; a node of tessera.conf named once only.
  Status PlaceNodes(const ConfigLine& l, const std::string& owner,
                    const std::vector<std::string>& nodes) {
    for (const auto& n : nodes) {
      if (!known_.count(n))
        return Err(l, owner + " names unknown node " + n + " (not in tessera.conf)");
      auto [it, fresh] = placed_.emplace(n, owner + " (" + l.Where() + ")");
      if (!fresh) return Err(l, "node " + n + " is in " + owner + " and already in " + it->second);
    }
    return Status::Ok();
  }

  Status SwitchLine(const ConfigLine& l) {
    TESSERA_RETURN_IF_ERROR(CheckName(l, l.pairs[0]));
    TopologySwitch sw;
    sw.name = l.pairs[0].value;
    sw.where = l.Where();
    if (auto it = switch_at_.find(sw.name); it != switch_at_.end())
      return Err(l, "switch " + sw.name + " is defined twice (first at " + it->second + ")");
    bool has_nodes = false, has_switches = false;
    for (size_t i = 1; i < l.pairs.size(); ++i) {
      const auto& p = l.pairs[i];
      if (p.key == "nodes") {
        auto names = Expand(l, p);
        if (!names.ok()) return names.status();
        sw.nodes = std::move(*names);
        has_nodes = true;
      } else if (p.key == "switches") {
        auto names = Expand(l, p);
        if (!names.ok()) return names.status();
        sw.switches = std::move(*names);
        has_switches = true;
      } else if (p.key == "linkspeed") {
        auto n = ParseUint(p.value, p.raw_key);
        if (!n.ok() || *n > UINT32_MAX)
          return Err(l, "invalid value \"" + p.value + "\" for LinkSpeed: expected a number");
        sw.link_speed = *n;
      } else {
        cfg_->warnings.push_back(l.Where() + ": unknown switch key " + p.raw_key + "; ignored");
      }
    }
    if (has_nodes && has_switches)
      return Err(l, "switch " + sw.name + " has both Nodes= and Switches= (a leaf has nodes, "
                    "a higher switch has switches)");
    TESSERA_RETURN_IF_ERROR(PlaceNodes(l, "switch " + sw.name, sw.nodes));
    switch_at_.emplace(sw.name, sw.where);
    cfg_->switches.push_back(std::move(sw));
    return Status::Ok();
  }

  // Every child is a defined switch, no switch is its own ancestor; a second parent warns
  // (Slurm accepts several parents; Tessera's tree keeps the first in file order).
  Status CheckSwitches() {
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < cfg_->switches.size(); ++i) index.emplace(cfg_->switches[i].name, i);
    std::map<std::string, std::string> parent;
    for (const auto& sw : cfg_->switches) {
      std::set<std::string> seen;
      for (const auto& child : sw.switches) {
        std::string where = sw.where + ": switch " + sw.name;
        if (!index.count(child)) return InvalidArgument(where + " names unknown switch " + child);
        if (!seen.insert(child).second)
          return InvalidArgument(where + " lists switch " + child + " twice");
        auto [it, fresh] = parent.emplace(child, sw.name);
        if (!fresh && child != sw.name)
          cfg_->warnings.push_back(where + ": switch " + child + " is also a child of " +
                                   it->second + "; Tessera's tree keeps its first parent, " +
                                   it->second);
      }
    }
    // Depth-first search over child edges: a back edge is a cycle.
    std::vector<int> state(cfg_->switches.size(), 0);  // 0 new, 1 on the path, 2 done
    std::vector<std::string> path;
    for (size_t i = 0; i < cfg_->switches.size(); ++i)
      TESSERA_RETURN_IF_ERROR(Visit(i, index, &state, &path));
    return Status::Ok();
  }

  Status Visit(size_t i, const std::map<std::string, size_t>& index, std::vector<int>* state,
               std::vector<std::string>* path) {
    if ((*state)[i] == 2) return Status::Ok();
    const auto& sw = cfg_->switches[i];
    path->push_back(sw.name);
    if ((*state)[i] == 1) {
      auto first = std::find(path->begin(), path->end() - 1, sw.name);
      std::string loop;
      for (auto it = first; it != path->end(); ++it) loop += (loop.empty() ? "" : " -> ") + *it;
      return InvalidArgument(sw.where + ": the switch tree has a cycle: " + loop);
    }
    (*state)[i] = 1;
    for (const auto& child : sw.switches)
      TESSERA_RETURN_IF_ERROR(Visit(index.at(child), index, state, path));
    (*state)[i] = 2;
    path->pop_back();
    return Status::Ok();
  }

  Status BlockLine(const ConfigLine& l) {
    TESSERA_RETURN_IF_ERROR(CheckName(l, l.pairs[0]));
    TopologyBlock b;
    b.name = l.pairs[0].value;
    b.where = l.Where();
    if (auto it = block_at_.find(b.name); it != block_at_.end())
      return Err(l, "block " + b.name + " is defined twice (first at " + it->second + ")");
    for (size_t i = 1; i < l.pairs.size(); ++i) {
      const auto& p = l.pairs[i];
      if (p.key == "nodes") {
        auto names = Expand(l, p);
        if (!names.ok()) return names.status();
        b.nodes = std::move(*names);
      } else {
        cfg_->warnings.push_back(l.Where() + ": unknown block key " + p.raw_key + "; ignored");
      }
    }
    TESSERA_RETURN_IF_ERROR(PlaceNodes(l, "block " + b.name, b.nodes));
    block_at_.emplace(b.name, b.where);
    cfg_->blocks.push_back(std::move(b));
    return Status::Ok();
  }

  // BlockSizes=base[,size...]: each a positive node count, the first is the base block, each
  // next one larger and a power-of-two multiple of the base (at most 2^15 of it), as Slurm.
  Status BlockSizesLine(const ConfigLine& l) {
    if (!sizes_where_.empty())
      return Err(l, "BlockSizes is given twice (first at " + sizes_where_ + ")");
    const std::string& v = l.pairs[0].value;
    std::vector<uint32_t> sizes;
    size_t pos = 0;
    while (pos <= v.size()) {
      size_t c = std::min(v.find(',', pos), v.size());
      std::string item = v.substr(pos, c - pos);
      auto n = ParseUint(item, "BlockSizes");
      std::string why;
      if (!n.ok() || *n == 0 || *n > UINT32_MAX)
        why = "\"" + item + "\" is not a positive node count";
      else if (!sizes.empty() && *n <= sizes.back())
        why = item + " is not larger than " + std::to_string(sizes.back());
      else if (!sizes.empty() && (*n % sizes[0] != 0 || !IsPow2(*n / sizes[0]) ||
                                  *n / sizes[0] >= (1u << kMaxBlockLevels)))
        why = item + " is not the base block size " + std::to_string(sizes[0]) +
              " times a power of two (at most 2^15)";
      if (!why.empty())
        return Err(l, "invalid value \"" + v + "\" for BlockSizes: " + why);
      sizes.push_back(static_cast<uint32_t>(*n));
      pos = c + 1;
    }
    for (size_t i = 1; i < l.pairs.size(); ++i)
      cfg_->warnings.push_back(l.Where() + ": unknown key " + l.pairs[i].raw_key +
                               " on the BlockSizes line; ignored");
    cfg_->block_sizes = std::move(sizes);
    sizes_where_ = l.Where();
    return Status::Ok();
  }

  static bool IsPow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

  // Slurm's effective sizes: the base block (given, else the first block's node count) times
  // 1, 2, 4, ... up to the first multiple that covers every block; larger ones are dropped.
  Status FinishBlockSizes(const std::string& path) {
    bool given = !cfg_->block_sizes.empty();
    if (!given) {
      const TopologyBlock* first = nullptr;
      for (const auto& b : cfg_->blocks) if (!b.nodes.empty()) { first = &b; break; }
      if (!first) return InvalidArgument(path + ": no block has nodes and BlockSizes is not set");
      for (uint32_t lvl = 0; lvl < kDefaultBlockLevels; ++lvl)
        cfg_->block_sizes.push_back(static_cast<uint32_t>(first->nodes.size()) << lvl);
    }
    uint32_t base = cfg_->block_sizes[0];
    std::string base_from =
        given ? "BlockSizes= at " + sizes_where_
              : "Slurm's default, the first block's node count; set BlockSizes=";
    for (const auto& b : cfg_->blocks) {
      if (b.nodes.size() >= base) continue;
      std::string msg = b.where + ": block " + b.name + " has " + std::to_string(b.nodes.size()) +
                        " nodes, fewer than the base block size " + std::to_string(base) + " (" +
                        base_from + ")";
      if (given) return InvalidArgument(msg);
      cfg_->warnings.push_back(msg);
    }
    size_t nblocks = cfg_->blocks.size(), keep = 0;
    while (keep < cfg_->block_sizes.size()) {
      uint64_t multiple = cfg_->block_sizes[keep++] / base;
      if (multiple >= nblocks) break;
    }
    if (given && keep < cfg_->block_sizes.size()) {
      std::vector<uint32_t> dropped(cfg_->block_sizes.begin() + keep, cfg_->block_sizes.end());
      std::string list;
      for (auto s : dropped) list += (list.empty() ? "" : ",") + std::to_string(s);
      cfg_->warnings.push_back(sizes_where_ + ": BlockSizes " + list + " exceed what the " +
                               std::to_string(nblocks) +
                               " blocks can aggregate; ignored (as Slurm)");
    }
    cfg_->block_sizes.resize(keep);
    return Status::Ok();
  }

  void WarnUnplaced(const std::string& path) {
    std::vector<std::string> unplaced;
    for (const auto& n : node_names_) if (!placed_.count(n)) unplaced.push_back(n);
    if (unplaced.empty()) return;
    bool tree = cfg_->kind == TopologyKind::kTree;
    cfg_->warnings.push_back(path + ": " + std::to_string(unplaced.size()) + " node(s) of " +
                             "tessera.conf have no place in the topology (" +
                             (tree ? "no leaf switch" : "no block") + "): " +
                             CompressHostlist(unplaced));
  }

  TopologyConfig* cfg_;
  std::set<std::string> known_;
  const std::vector<std::string>& node_names_;
  std::map<std::string, std::string> placed_;     // node -> "switch s0 (file:line)"
  std::map<std::string, std::string> switch_at_;  // name -> file:line
  std::map<std::string, std::string> block_at_;
  std::string sizes_where_;
};

Result<TopologyConfig> Build(const Result<std::vector<ConfigLine>>& lines, const std::string& path,
                             TopologyKind kind, const std::vector<std::string>& node_names) {
  if (!lines.ok()) return lines.status();
  TopologyConfig cfg;
  cfg.kind = kind;
  cfg.path = path;
  Parser parser(&cfg, node_names);
  for (const auto& l : *lines) TESSERA_RETURN_IF_ERROR(parser.Line(l));
  TESSERA_RETURN_IF_ERROR(parser.Finish(path));
  return cfg;
}

}  // namespace

Result<TopologyKind> ParseTopologyPlugin(const std::string& text) {
  std::string v = ToLower(text);
  if (v.empty() || v == "topology/flat" || v == "topology/default" || v == "topology/none")
    return TopologyKind::kFlat;
  if (v == "topology/tree") return TopologyKind::kTree;
  if (v == "topology/block") return TopologyKind::kBlock;
  return InvalidArgument("unknown topology plugin \"" + text +
                         "\": expected topology/tree, topology/block, topology/flat or "
                         "topology/default");
}

const char* TopologyPluginName(TopologyKind kind) {
  switch (kind) {
    case TopologyKind::kTree: return "topology/tree";
    case TopologyKind::kBlock: return "topology/block";
    case TopologyKind::kFlat: break;
  }
  return "topology/flat";
}

Result<TopologyConfig> ParseTopologyConfig(const std::string& text, const std::string& path,
                                           TopologyKind kind,
                                           const std::vector<std::string>& node_names) {
  if (kind == TopologyKind::kFlat) return TopologyConfig{};
  return Build(ParseConfigText(text, path), path, kind, node_names);
}

Result<TopologyConfig> LoadTopologyConfig(const std::string& path, TopologyKind kind,
                                          const std::vector<std::string>& node_names) {
  if (kind == TopologyKind::kFlat) return TopologyConfig{};
  auto lines = ParseConfigFile(path);
  if (!lines.ok()) {
    return Status(lines.status().code(), "topology file for TopologyPlugin=" +
                                             std::string(TopologyPluginName(kind)) + ": " +
                                             lines.status().message());
  }
  return Build(lines, path, kind, node_names);
}

}  // namespace tessera
