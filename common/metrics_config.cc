#include "common/metrics_config.h"

#include "common/duration.h"
#include "common/hostlist.h"

namespace tessera {

namespace {

// "P" (every one of `count` nodes) or "LO-HI" (one port each; HI-LO+1 == count). 0 = none.
Result<std::vector<uint16_t>> PortList(const ConfigLine& l, const std::string& spec, size_t count) {
  size_t dash = spec.find('-');
  auto lo = ParseUint(spec.substr(0, dash), "MetricsPort");
  auto hi = dash == std::string::npos ? lo : ParseUint(spec.substr(dash + 1), "MetricsPort");
  if (!lo.ok() || !hi.ok() || *hi > 65535 || *hi < *lo)
    return InvalidArgument(l.Where() + ": invalid MetricsPort \"" + spec + "\"");
  if (dash != std::string::npos && *hi - *lo + 1 != count)
    return InvalidArgument(l.Where() + ": MetricsPort range " + spec + " has " +
                           std::to_string(*hi - *lo + 1) + " ports for " + std::to_string(count) +
                           " nodes");
  std::vector<uint16_t> ports;
  for (size_t i = 0; i < count; ++i)
    ports.push_back(static_cast<uint16_t>(dash == std::string::npos ? *lo : *lo + i));
  return ports;
}

Status NodeLine(const ConfigLine& l, uint16_t* default_port, MetricsSettings* out) {
  const std::string& expr = l.pairs.front().value;
  const std::string* spec = l.Find("metricsport");
  if (ToLower(expr) == "default") {
    if (!spec) return Status::Ok();
    auto p = PortList(l, *spec, 1);
    if (!p.ok()) return p.status();
    *default_port = (*p)[0];
    return Status::Ok();
  }
  if (!spec && *default_port == 0) return Status::Ok();
  auto names = ExpandHostlist(expr);
  if (!names.ok()) return Status::Ok();  // BuildClusterConfig reports the node line itself
  std::vector<uint16_t> ports(names->size(), *default_port);
  if (spec) {
    auto p = PortList(l, *spec, names->size());
    if (!p.ok()) return p.status();
    ports = *p;
  }
  for (size_t i = 0; i < names->size(); ++i) {
    if (ports[i]) out->node_ports[(*names)[i]] = ports[i];
    else out->node_ports.erase((*names)[i]);
  }
  return Status::Ok();
}

}  // namespace

Result<MetricsSettings> ReadMetricsSettings(const std::vector<ConfigLine>& lines) {
  MetricsSettings s;
  uint16_t default_port = 0;
  for (const auto& l : lines) {
    if (l.pairs.empty()) continue;
    const std::string& head = l.Head();
    if (head == "nodename") {
      TESSERA_RETURN_IF_ERROR(NodeLine(l, &default_port, &s));
      continue;
    }
    if (head == "partitionname" || head == "qosname" || head == "accountname" || head == "username")
      continue;
    for (const auto& p : l.pairs) {
      if (p.key == "metricsport") {
        auto n = ParseUint(p.value, "MetricsPort");
        if (!n.ok() || *n > 65535)
          return InvalidArgument(l.Where() + ": invalid value \"" + p.value + "\" for " + p.raw_key +
                                 ": expected a port number (0 = none)");
        s.ctld_port = static_cast<uint16_t>(*n);
      } else if (p.key == "metricsaddress") {
        if (p.value.empty())
          return InvalidArgument(l.Where() + ": invalid value \"\" for " + p.raw_key +
                                 ": expected an address to listen on");
        s.address = p.value;
      }
    }
  }
  return s;
}

}  // namespace tessera
