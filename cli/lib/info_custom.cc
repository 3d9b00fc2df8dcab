#include "cli/lib/info_custom.h"

#include "cli/lib/share_view.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "cli/lib/gpu_units.h"
#include "cli/lib/info_format.h"
#include "cli/lib/text_util.h"
#include "common/control_chars.h"
#include "common/duration.h"
#include "common/hostlist.h"

namespace tessera::cli {
namespace {

namespace pb = ::tessera::v1;

const std::map<char, const char*>& Headers() {
  static const std::map<char, const char*> k = {
      {'P', "PARTITION"}, {'R', "PARTITION"}, {'a', "AVAIL"},         {'l', "TIMELIMIT"},
      {'L', "DEFAULTTIME"}, {'D', "NODES"},   {'t', "STATE"},         {'T', "STATE"},
      {'N', "NODELIST"},  {'n', "HOSTNAMES"}, {'c', "CPUS"},          {'C', "CPUS(A/I/O/T)"},
      {'m', "MEMORY"},    {'G', "GRES"},      {'f', "AVAIL_FEATURES"}, {'E', "REASON"},
      {'s', "JOB_SIZE"},  {'r', "ROOT"},      {'h', "OVERSUBSCRIBE"}, {'g', "GROUPS"},
      {'z', "S:C:T"},     {'d', "TMP_DISK"},  {'w', "WEIGHT"},        {'O', "CPU_LOAD"},
      {'e', "FREE_MEM"},  {'F', "NODES(A/I/O/T)"}};
  return k;
}

bool Aggregates(char c) { return c == 'N' || c == 'n' || c == 'D' || c == 'C' || c == 'F'; }

// sinfo's %T: node_state_string lower-cased; a drained node is "drained", one still running
// jobs "draining" (scontrol's IDLE+DRAIN / MIXED+DRAIN).
std::string SinfoStateLong(const pb::NodeInfo& n) {
  if (n.state() == pb::NODE_DRAINED) return "drained";
  if (n.state() == pb::NODE_DRAINING) return "draining";
  return ToLower(NodeStateLong(n));
}

std::string Limit(int64_t s) { return s <= 0 ? "infinite" : FormatDuration(s); }

// Whole GPUs by type, MIG instances by profile (a GPU in MIG mode counts as its instances).
std::string Gres(const pb::NodeInfo& n) {
  std::string out = GpuUnitsText(GpuUnitsOfNode(n), false);
  if (std::string sh = ShareGres(n); !sh.empty()) out += (out.empty() ? "" : ",") + sh;
  return out.empty() ? "(null)" : out;
}

std::string Features(const pb::NodeInfo& n) {
  std::string out;
  for (const auto& f : n.features()) out += (out.empty() ? "" : ",") + f;
  return out.empty() ? "(null)" : out;
}

// The value of a non-aggregating code for one (partition, node) pair.
std::string Cell(char c, const pb::PartitionInfo& p, const pb::NodeInfo& n) {
  switch (c) {
    case 'P': return p.name() + (p.is_default() ? "*" : "");
    case 'R': return p.name();
    case 'a': return p.up() ? "up" : "down";
    case 'l': return Limit(p.max_time_s());
    case 'L': return p.default_time_s() < 0 ? "n/a" : Limit(p.default_time_s());
    case 't': return NodeStateCompact(n.state());
    case 'T': return SinfoStateLong(n);
    case 'c': return std::to_string(n.cpus());
    case 'm': return std::to_string(n.real_memory_mib());
    case 'G': return Gres(n);
    case 'f': return Features(n);
    case 'E': return n.reason().empty() ? "none" : n.reason();
    case 's': return p.max_nodes() ? "1-" + std::to_string(p.max_nodes()) : "1-infinite";
    case 'r': return "no";
    case 'h': return "NO";
    case 'g': return "all";
    case 'z': return std::to_string(n.cpus()) + ":1:1";  // CPUs only: Sockets=CPUs (Slurm)
    case 'd': return "0";
    case 'w': return std::to_string(n.weight() ? n.weight() : 1);
    case 'O': {
      if (n.cpu_load_x100() < 0 || (n.cpu_load_x100() == 0 && n.free_mem_mib() == 0)) return "N/A";
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f", n.cpu_load_x100() / 100.0);
      return buf;
    }
    case 'e': return n.free_mem_mib() ? std::to_string(n.free_mem_mib()) : "N/A";
    default: return "";
  }
}

struct Group {
  std::vector<std::string> key;  // non-aggregating cells
  std::vector<std::string> names;
  uint64_t alloc = 0, idle = 0, other = 0, total = 0;
  uint64_t nodes_alloc = 0, nodes_idle = 0, nodes_other = 0;  // %F (sinfo -s)
};

bool Unavailable(pb::NodeState s) {
  return s == pb::NODE_DOWN || s == pb::NODE_DRAINED || s == pb::NODE_FAILED || s == pb::NODE_UNKNOWN;
}

}  // namespace

Result<InfoFormat> ParseInfoFormat(const std::string& fmt) {
  InfoFormat out;
  std::string* literal = &out.prefix;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      *literal += fmt[i];
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '%') {
      *literal += '%';
      ++i;
      continue;
    }
    InfoField f;
    size_t j = i + 1;
    if (j < fmt.size() && fmt[j] == '.') {
      f.right = true;
      ++j;
    }
    while (j < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[j])))
      f.width = f.width * 10 + (fmt[j++] - '0');
    if (j >= fmt.size() || !Headers().count(fmt[j])) {
      std::string codes;
      for (const auto& [c, h] : Headers()) codes += c;
      return InvalidArgument("invalid format code \"" + fmt.substr(i, j - i + 1) +
                             "\" (valid codes: " + codes + ")");
    }
    f.code = fmt[j];
    out.fields.push_back(f);
    literal = &out.fields.back().suffix;
    i = j;
  }
  return out;
}

std::string FormatInfoCustom(const std::vector<pb::PartitionInfo>& partitions,
                             const std::vector<pb::NodeInfo>& nodes, const InfoFormat& fmt,
                             bool node_oriented, bool header) {
  std::vector<Group> groups;
  std::map<std::vector<std::string>, size_t> index;
  // %n (host names) makes one row per node, as sinfo's hostnames match (issue 19).
  bool per_host = node_oriented || std::any_of(fmt.fields.begin(), fmt.fields.end(),
                                               [](const InfoField& f) { return f.code == 'n'; });
  for (const auto& p : partitions) {
    std::set<std::string> members;
    if (auto hosts = ExpandHostlist(p.nodes()); hosts.ok()) members.insert(hosts->begin(), hosts->end());
    for (const auto& n : nodes) {
      bool named = std::find(n.partitions().begin(), n.partitions().end(), p.name()) != n.partitions().end();
      if (!named && !members.count(n.name())) continue;
      std::vector<std::string> key;
      for (const auto& f : fmt.fields)
        if (!Aggregates(f.code)) key.push_back(Cell(f.code, p, n));
      if (per_host) key.push_back(n.name());
      auto [it, fresh] = index.emplace(key, groups.size());
      if (fresh) groups.push_back({key, {}, 0, 0, 0, 0, 0, 0, 0});
      Group& g = groups[it->second];
      // A node of two partitions shown in one row (no partition field) counts once, as sinfo.
      if (std::find(g.names.begin(), g.names.end(), n.name()) != g.names.end()) continue;
      g.names.push_back(n.name());
      // %F: nodes allocated (alloc, mix) / idle / other (down, drain(ing), fail, unknown).
      if (Unavailable(n.state()) || n.state() == pb::NODE_DRAINING) ++g.nodes_other;
      else if (n.state() == pb::NODE_IDLE) ++g.nodes_idle;
      else ++g.nodes_alloc;
      g.total += n.cpus();
      if (Unavailable(n.state())) {
        g.other += n.cpus();
      } else {
        g.alloc += n.alloc_cpus();
        g.idle += n.cpus() - std::min(n.cpus(), n.alloc_cpus());
      }
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = fmt.prefix;
    for (size_t i = 0; i < fmt.fields.size(); ++i) {
      const auto& f = fmt.fields[i];
      out += PadField(EscapeControlChars(cells[i]), f.width, f.right, f.width > 0) + f.suffix;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out;
  if (header) {
    std::vector<std::string> h;
    for (const auto& f : fmt.fields) h.push_back(Headers().at(f.code));
    out += line(h);
  }
  for (auto& g : groups) {
    SortHostNames(g.names);
    std::vector<std::string> cells;
    size_t k = 0;
    for (const auto& f : fmt.fields) {
      switch (f.code) {
        case 'N': cells.push_back(CompressHostlist(g.names)); break;
        case 'n': cells.push_back(CompressHostlist(g.names)); break;
        case 'D': cells.push_back(std::to_string(g.names.size())); break;
        case 'F':
          cells.push_back(std::to_string(g.nodes_alloc) + "/" + std::to_string(g.nodes_idle) + "/" +
                          std::to_string(g.nodes_other) + "/" + std::to_string(g.names.size()));
          break;
        case 'C':
          cells.push_back(std::to_string(g.alloc) + "/" + std::to_string(g.idle) + "/" +
                          std::to_string(g.other) + "/" + std::to_string(g.total));
          break;
        default: cells.push_back(g.key[k++]);
      }
    }
    out += line(cells);
  }
  return out;
}

}  // namespace tessera::cli
