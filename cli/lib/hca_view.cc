#include "cli/lib/hca_view.h"

namespace tessera::cli {

std::string FormatHcas(const tessera::v1::NodeInfo& node) {
  std::string out;
  for (const auto& h : node.hcas()) {
    std::string e = h.name() + ":" + std::to_string(h.port()) + "(" +
                    (h.link_layer().empty() ? "unknown" : h.link_layer()) + "," +
                    (h.state().empty() ? "unknown" : h.state());
    if (h.numa_node() >= 0) e += ",numa=" + std::to_string(h.numa_node());
    if (!h.netdev().empty()) e += ",netdev=" + h.netdev();
    std::string gpus;
    for (const auto& g : node.gpus())
      if (h.numa_node() >= 0 && g.numa_node() == h.numa_node())
        gpus += (gpus.empty() ? "" : "+") + std::to_string(g.index());
    if (!gpus.empty()) e += ",gpus=" + gpus;
    out += (out.empty() ? "" : " ") + e + ")";
  }
  return out;
}

}  // namespace tessera::cli
