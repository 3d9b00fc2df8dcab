#include "common/wire_config.h"

#include "common/duration.h"

namespace tessera {

Result<uint16_t> ReadWirePort(const std::vector<ConfigLine>& lines, bool tls_enabled) {
  uint16_t port = 0;
  std::string where;
  for (const auto& l : lines) {
    if (l.pairs.empty()) continue;
    const std::string& head = l.Head();
    if (head == "nodename" || head == "partitionname" || head == "qosname" ||
        head == "accountname" || head == "username")
      continue;
    for (const auto& p : l.pairs) {
      if (p.key != "controllerwireport") continue;
      auto n = ParseUint(p.value, "ControllerWirePort");
      if (!n.ok() || *n > 65535)
        return InvalidArgument(l.Where() + ": invalid value \"" + p.value + "\" for " +
                               p.raw_key + ": expected a port number (0 = off)");
      port = static_cast<uint16_t>(*n);
      where = l.Where();
    }
  }
  if (port != 0 && tls_enabled)
    return InvalidArgument(where + ": ControllerWirePort is a plaintext port and cannot be used "
                                   "with TLS (TlsCertFile/TlsKeyFile/TlsCaFile): remove one of them");
  return port;
}

}  // namespace tessera
