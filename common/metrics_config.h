#pragma once
// The Prometheus endpoint keys of tessera.conf (issue 20 §3), read from the config lines:
//   MetricsPort=P          tessera-ctld's endpoint (0 = none, the default)
//   MetricsAddress=ADDR    where ctld and every noded listen (default 0.0.0.0)
//   NodeName=... MetricsPort=P|LO-HI   a node's tessera-noded endpoint; a range gives one port
//                          per node, as Port=; NodeName=DEFAULT sets it for the lines after it.
// BuildClusterConfig checks them (a bad value is an error naming file:line), so a loaded
// configuration always reads back without error here.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/config_file.h"
#include "common/status.h"

namespace tessera {

struct MetricsSettings {
  uint16_t ctld_port = 0;
  std::string address = "0.0.0.0";
  std::map<std::string, uint16_t> node_ports;  // nodes with a MetricsPort (not 0)
};

Result<MetricsSettings> ReadMetricsSettings(const std::vector<ConfigLine>& lines);

}  // namespace tessera
