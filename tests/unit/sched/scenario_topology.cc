// Scenario topology (issue 15): "topology" lines, partition/job topology keys, and the
// topology expectations. Format: tests/scenarios/README.md, section "Topology".
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "common/duration.h"
#include "common/topology_config.h"
#include "ctld/sched/topology.h"
#include "tests/unit/sched/scenario.h"

namespace tessera::sched::testing {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool ParseCount(const std::string& v, uint32_t* out) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 9)
    return false;
  *out = static_cast<uint32_t>(std::stoul(v));
  return true;
}

std::string JoinArgs(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

// Leaves (TopologySnap::node_leaf) of the named nodes; -1 counts as one place of its own.
size_t LeavesOf(const Scenario& s, const std::vector<std::string>& names) {
  std::set<int64_t> leaves;
  for (const auto& name : names) {
    for (size_t i = 0; i < s.snap.nodes.size(); ++i) {
      if (s.snap.nodes[i].name != name) continue;
      int32_t leaf = s.snap.topology ? s.snap.topology->node_leaf[i] : -1;
      leaves.insert(leaf >= 0 ? leaf : -1 - static_cast<int64_t>(i));
    }
  }
  return leaves.size();
}

}  // namespace

Status ScenarioTopologyLine(Scenario& sc, const std::string& rest, const std::string& where) {
  std::string line = Trim(rest);
  if (line == "tree" || line == "block") {
    if (!sc.topology_plugin.empty()) return InvalidArgument(where + ": topology plugin given twice");
    sc.topology_plugin = "topology/" + line;
    return Status::Ok();
  }
  if (line.empty()) return InvalidArgument(where + ": topology tree|block, or a topology.conf line");
  sc.topology_text += line + "\n";
  return Status::Ok();
}

bool ScenarioTopologyPartitionKey(const std::string& key, const std::string& v, PartitionSnap& p,
                                  std::string* err) {
  if (key != "topology") return false;
  if (v != "required" && v != "preferred") *err = "topology=required|preferred, not " + v;
  p.topology_required = v == "required";
  return true;
}

bool ScenarioTopologyJobKey(const std::string& key, const std::string& v, JobSnap& j,
                            std::string* err) {
  if (key == "segment") {
    if (!ParseCount(v, &j.segment)) *err = "bad segment " + v;
    return true;
  }
  if (key != "switches") return false;
  size_t at = v.find('@');  // switches=N[@max-time], Slurm's --switches
  if (!ParseCount(v.substr(0, at), &j.switches)) *err = "bad switches " + v;
  if (at != std::string::npos) {
    auto t = ParseTimeLimit(v.substr(at + 1));
    if (!t.ok()) *err = "bad switches wait " + v;
    else j.switches_wait_s = *t;
  }
  return true;
}

Status FinishScenarioTopology(Scenario& sc) {
  if (sc.topology_plugin.empty()) {
    if (!sc.topology_text.empty())
      return InvalidArgument(sc.file + ": topology lines without \"topology tree|block\"");
    return Status::Ok();
  }
  auto kind = ParseTopologyPlugin(sc.topology_plugin);
  if (!kind.ok()) return kind.status();
  std::vector<std::string> names;
  for (const auto& n : sc.snap.nodes) names.push_back(n.name);
  auto cfg = ParseTopologyConfig(sc.topology_text, sc.file + "[topology]", *kind, names);
  bool expects_error = std::any_of(sc.expects.begin(), sc.expects.end(),
                                   [](const Expect& e) { return e.kind == "topology_error"; });
  if (!cfg.ok()) {
    if (!expects_error) return cfg.status();
    sc.topology_error = cfg.status().message();
    return Status::Ok();
  }
  sc.topology_warnings = cfg->warnings;
  sc.snap.topology = std::make_shared<const TopologySnap>(BuildTopologySnap(*cfg, names));
  return Status::Ok();
}

bool TopologyExpectHasNoJob(const std::string& kind) {
  return kind == "topology_error" || kind == "topology_warning";
}

bool CheckTopologyExpect(const Scenario& s, const Expect& e, const CycleResult& r,
                         std::string* why) {
  std::string text = JoinArgs(e.args);
  if (e.kind == "topology_error") {
    if (s.topology_error.empty()) *why = "expected a topology error";
    else if (s.topology_error.find(text) == std::string::npos)
      *why = "topology error \"" + s.topology_error + "\" lacks \"" + text + "\"";
    return true;
  }
  if (e.kind == "topology_warning") {
    bool found = std::any_of(s.topology_warnings.begin(), s.topology_warnings.end(),
                             [&](const std::string& w) { return w.find(text) != std::string::npos; });
    if (!found) *why = "no topology warning contains \"" + text + "\"";
    return true;
  }
  if (e.kind != "leaves") return false;
  const Decision* d = nullptr;
  for (const auto& x : r.decisions)
    if (x.job_id == e.job) d = &x;
  if (!d || e.args.empty()) {
    *why = "expect leaves ID N: no decision or no N";
    return true;
  }
  std::vector<std::string> nodes = d->reserved_nodes;
  if (d->kind == Decision::Kind::kStart)
    for (const auto& p : d->placement) nodes.push_back(p.node);
  std::string got = std::to_string(LeavesOf(s, nodes));
  if (nodes.empty()) *why = "expected a start or reservation on " + e.args[0] + " leaves";
  else if (got != e.args[0]) *why = "expected " + e.args[0] + " leaves, got " + got;
  return true;
}

}  // namespace tessera::sched::testing
