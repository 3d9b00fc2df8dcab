#include "cli/lib/info_format.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "cli/lib/id_names.h"
#include "cli/lib/text_util.h"
#include "common/control_chars.h"
#include "common/duration.h"
#include "common/hostlist.h"

namespace tessera::cli {
namespace {

namespace pb = ::tessera::v1;
constexpr int kMinFieldSize = 9;  // sinfo's MIN_PART_FIELD_SIZE / MIN_NODE_FIELD_SIZE

// Display order of states inside one partition.
int StateRank(pb::NodeState s) {
  switch (s) {
    case pb::NODE_MIXED: return 0;
    case pb::NODE_ALLOCATED: return 1;
    case pb::NODE_IDLE: return 2;
    case pb::NODE_DRAINING: return 3;
    case pb::NODE_DRAINED: return 4;
    case pb::NODE_DOWN: return 5;
    case pb::NODE_FAILED: return 6;
    default: return 7;
  }
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Nodes of partition `p`: those that name it, plus those in its hostlist.
std::vector<const pb::NodeInfo*> Members(const pb::PartitionInfo& p,
                                         const std::vector<pb::NodeInfo>& nodes) {
  std::set<std::string> listed;
  if (auto hosts = ExpandHostlist(p.nodes()); hosts.ok())
    listed.insert(hosts->begin(), hosts->end());
  std::vector<const pb::NodeInfo*> out;
  for (const auto& n : nodes) {
    bool named = std::find(n.partitions().begin(), n.partitions().end(), p.name()) !=
                 n.partitions().end();
    if (named || listed.count(n.name())) out.push_back(&n);
  }
  return out;
}

std::string PartLabel(const pb::PartitionInfo& p) { return p.name() + (p.is_default() ? "*" : ""); }

std::string LimitText(int64_t s) { return s <= 0 ? "infinite" : FormatDuration(s); }

std::string Compress(std::vector<std::string> names) {
  SortHostNames(names);
  return CompressHostlist(names);
}

struct Row {
  std::vector<std::string> cells;
};

using StateGroup = pb::ListNodesResponse::StateGroup;

// A partition's rows of the default view from node records: by state, in sinfo's order.
std::vector<StateGroup> GroupNodes(const pb::PartitionInfo& p, const std::vector<pb::NodeInfo>& nodes) {
  std::map<int, std::pair<pb::NodeState, std::vector<std::string>>> by_state;
  for (const auto* n : Members(p, nodes)) {
    auto& slot = by_state[StateRank(n->state())];
    slot.first = n->state();
    slot.second.push_back(n->name());
  }
  std::vector<StateGroup> out;
  for (auto& [rank, st] : by_state) {
    StateGroup g;
    g.set_state(st.first);
    g.set_count(static_cast<uint32_t>(st.second.size()));
    g.set_nodes(Compress(std::move(st.second)));
    out.push_back(std::move(g));
  }
  return out;
}

std::string PartitionView(const std::vector<const pb::PartitionInfo*>& parts,
                          const std::function<std::vector<StateGroup>(const pb::PartitionInfo&)>& groups_of,
                          bool header) {
  std::vector<Row> rows;
  size_t pw = kMinFieldSize;
  for (const auto* p : parts) {
    pw = std::max(pw, PartLabel(*p).size());
    std::vector<StateGroup> groups = groups_of(*p);
    std::string avail = p->up() ? "up" : "down";
    if (groups.empty())
      rows.push_back({{PartLabel(*p), avail, LimitText(p->max_time_s()), "0", "n/a", ""}});
    for (const auto& g : groups)
      rows.push_back({{PartLabel(*p), avail, LimitText(p->max_time_s()), std::to_string(g.count()),
                       NodeStateCompact(g.state()), g.nodes()}});
  }
  std::string out;
  int w = static_cast<int>(pw);
  auto line = [&](const std::vector<std::string>& c, bool cut_nodes) {
    return PadField(c[0], w, false, true) + " " + PadField(c[1], 5, true, true) + " " +
           PadField(c[2], 10, true, true) + " " + PadField(c[3], 6, true, true) + " " +
           PadField(c[4], 6, true, true) + " " + PadField(c[5], 0, false, cut_nodes) + "\n";
  };
  if (header) out += line({"PARTITION", "AVAIL", "TIMELIMIT", "NODES", "STATE", "NODELIST"}, false);
  for (const auto& r : rows) out += line(r.cells, true);
  return out;
}

std::string NodeView(const std::vector<const pb::PartitionInfo*>& parts,
                     const std::vector<pb::NodeInfo>& nodes, bool header) {
  std::vector<std::pair<const pb::NodeInfo*, std::string>> rows;  // node, partition label
  for (const auto* p : parts)
    for (const auto* n : Members(*p, nodes)) rows.push_back({n, PartLabel(*p)});
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return HostNameLess(a.first->name(), b.first->name());
  });
  size_t nw = kMinFieldSize, pw = kMinFieldSize;
  for (const auto& r : rows) {
    nw = std::max(nw, r.first->name().size());
    pw = std::max(pw, r.second.size());
  }
  auto line = [&](const std::string& n, const std::string& cnt, const std::string& p,
                  const std::string& st, bool cut_node) {
    return PadField(n, static_cast<int>(nw), false, cut_node) + " " +
           PadField(cnt, 6, true, true) + " " + PadField(p, static_cast<int>(pw), false, true) +
           " " + PadField(st, 6, false, true) + "\n";
  };
  std::string out;
  if (header) out += line("NODELIST", "NODES", "PARTITION", "STATE", false);
  for (const auto& r : rows)
    out += line(r.first->name(), "1", r.second, NodeStateCompact(r.first->state()), true);
  return out;
}

bool NeedsReason(pb::NodeState s) {
  return s == pb::NODE_DOWN || s == pb::NODE_DRAINED || s == pb::NODE_DRAINING ||
         s == pb::NODE_FAILED;
}

// sinfo -R USER: who set the reason, as a name (the uid where it has none): an administrator, or
// the controller's own user for the reasons it sets (issue 21); Unknown when it was set before
// reason users were recorded.
template <typename T>  // pb::NodeInfo or pb::GpuDevice
std::string ReasonUser(const T& n, const IdNames* names) {
  if (!n.has_reason_uid()) return "Unknown";
  uint32_t uid = n.reason_uid();
  std::string name = names ? names->UserName(uid) : "";
  return name.empty() ? std::to_string(uid) : name;
}

std::string ReasonView(const std::vector<const pb::PartitionInfo*>& parts,
                       const std::vector<pb::NodeInfo>& nodes, bool header,
                       const IdNames* names) {
  std::map<std::string, std::vector<std::string>> by_reason;
  std::vector<std::string> reason_order;
  std::set<std::string> seen;
  for (const auto* p : parts)
    for (const auto* n : Members(*p, nodes)) {
      if (!NeedsReason(n->state()) || !seen.insert(n->name()).second) continue;
      std::string reason = n->reason().empty() ? "Not responding" : EscapeControlChars(n->reason());
      // Rows are per reason and time, as sinfo -R (issue 19: TIMESTAMP is the reason's time).
      std::string key = reason + '\n' + ReasonUser(*n, names) + '\n' +
                        FormatTimestamp(n->reason_time(), /*unknown_word=*/true);
      if (!by_reason.count(key)) reason_order.push_back(key);
      by_reason[key].push_back(n->name());
    }
  auto line = [](const std::string& r, const std::string& u, const std::string& t,
                 const std::string& n, bool cut) {
    return PadField(r, 20, false, true) + " " + PadField(u, 9, false, true) + " " +
           PadField(t, 19, false, true) + " " + PadField(n, 0, false, cut) + "\n";
  };
  std::string out;
  if (header) out += line("REASON", "USER", "TIMESTAMP", "NODELIST", false);
  for (const auto& key : reason_order) {
    size_t nl = key.rfind('\n'), ul = key.find('\n');
    out += line(key.substr(0, ul), key.substr(ul + 1, nl - ul - 1), key.substr(nl + 1),
                Compress(by_reason[key]), true);
  }
  // One line per drained GPU (issue 14): "gpu<index>: <reason>", then its node.
  seen.clear();
  for (const auto* p : parts)
    for (const auto* n : Members(*p, nodes)) {
      if (!seen.insert(n->name()).second) continue;
      for (const auto& g : n->gpus())
        if (!g.healthy())
          out += line("gpu" + std::to_string(g.index()) + ": " +
                          EscapeControlChars(g.health_reason().empty() ? "unhealthy"
                                                                       : g.health_reason()),
                      ReasonUser(g, names), FormatTimestamp(g.reason_time(), true), n->name(),
                      true);
    }
  return out;
}

}  // namespace

std::string NodeStateCompact(pb::NodeState s) {
  switch (s) {
    case pb::NODE_IDLE: return "idle";
    case pb::NODE_MIXED: return "mix";
    case pb::NODE_ALLOCATED: return "alloc";
    case pb::NODE_DOWN: return "down";
    case pb::NODE_DRAINED: return "drain";
    case pb::NODE_DRAINING: return "drng";
    case pb::NODE_FAILED: return "fail";
    default: return "unk";
  }
}

std::string NodeStateLong(const pb::NodeInfo& node) {
  switch (node.state()) {
    case pb::NODE_IDLE: return "IDLE";
    case pb::NODE_MIXED: return "MIXED";
    case pb::NODE_ALLOCATED: return "ALLOCATED";
    case pb::NODE_DOWN: return "DOWN";
    case pb::NODE_DRAINED: return "IDLE+DRAIN";
    case pb::NODE_DRAINING:
      return node.alloc_cpus() >= node.cpus() && node.cpus() > 0 ? "ALLOCATED+DRAIN"
                                                                 : "MIXED+DRAIN";
    case pb::NODE_FAILED: return "FAIL";
    default: return "UNKNOWN";
  }
}

std::string FormatInfo(const std::vector<pb::PartitionInfo>& partitions,
                       const std::vector<pb::NodeInfo>& nodes, const InfoOptions& opts) {
  std::vector<const pb::PartitionInfo*> parts;
  for (const auto& p : partitions)
    if (opts.partitions.empty() || Contains(opts.partitions, p.name())) parts.push_back(&p);
  if (opts.list_reasons) return ReasonView(parts, nodes, opts.header, opts.names);
  if (opts.node_oriented) return NodeView(parts, nodes, opts.header);
  return PartitionView(
      parts, [&](const pb::PartitionInfo& p) { return GroupNodes(p, nodes); }, opts.header);
}

std::string FormatInfoSummary(const std::vector<pb::PartitionInfo>& partitions,
                              const std::vector<StateGroup>& groups, const InfoOptions& opts) {
  std::vector<const pb::PartitionInfo*> parts;
  for (const auto& p : partitions)
    if (opts.partitions.empty() || Contains(opts.partitions, p.name())) parts.push_back(&p);
  auto groups_of = [&](const pb::PartitionInfo& p) {
    std::vector<StateGroup> out;
    for (const auto& g : groups)
      if (g.partition() == p.name()) out.push_back(g);
    return out;
  };
  return PartitionView(parts, groups_of, opts.header);
}

}  // namespace tessera::cli
