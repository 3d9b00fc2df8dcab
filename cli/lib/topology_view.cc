#include "cli/lib/topology_view.h"

#include "common/config_file.h"

namespace tessera::cli {

Result<tessera::v1::ShowTopologyRequest> ParseShowTopologyArgs(
    const std::vector<std::string>& args) {
  tessera::v1::ShowTopologyRequest req;
  for (const auto& a : args) {
    size_t eq = a.find('=');
    if (eq == std::string::npos) {
      if (!req.unit().empty()) return InvalidArgument("show topology: more than one name: " + a);
      req.set_unit(a);
      continue;
    }
    std::string key = ToLower(a.substr(0, eq)), value = a.substr(eq + 1);
    if (key == "node" || key == "nodes") {
      req.set_nodes(value);
    } else if (key == "switch" || key == "block" || key == "unit") {
      req.set_unit(value);
    } else {
      return InvalidArgument("show topology: unknown argument " + a +
                             " (expected NAME, node=HOSTLIST, switch=NAME or block=NAME)");
    }
  }
  return req;
}

std::string FormatTopology(const tessera::v1::ShowTopologyResponse& resp) {
  if (resp.records().empty())
    return "No topology information available (TopologyPlugin=" + resp.plugin() + ")\n";
  std::string out;
  for (const auto& r : resp.records()) {
    if (r.kind() == "SwitchName") {
      out += "SwitchName=" + r.name() + " Level=" + std::to_string(r.level()) +
             " LinkSpeed=" + std::to_string(r.link_speed());
      if (!r.nodes().empty()) out += " Nodes=" + r.nodes();
      if (!r.switches().empty()) out += " Switches=" + r.switches();
    } else {
      out += r.kind() + "=" + r.name() + " BlockIndex=" + std::to_string(r.block_index());
      if (!r.nodes().empty()) out += " Nodes=" + r.nodes();
      out += " BlockSize=" + std::to_string(r.block_size());
    }
    out += "\n";
  }
  return out;
}

}  // namespace tessera::cli
