#pragma once
// ControllerWirePort=P (issue 20 §1): the port of ctld's TCP wire for commands on other hosts
// (rpc/wire_tcp.h: the local socket's framing with a munge credential per request), served
// beside gRPC on SlurmctldPort. 0 or unset = off, the default: it is one more port to open, and
// the commands then take gRPC as before. The wire is plaintext, so a config that sets it together
// with the Tls keys is refused (file:line): with TLS configured, remote commands keep gRPC + TLS.
// ctld, the commands and BuildClusterConfig read it here.
#include <cstdint>
#include <vector>

#include "common/config_file.h"
#include "common/status.h"

namespace tessera {

// The port (0 = off); an error naming file:line for a bad value or for the port with TLS.
Result<uint16_t> ReadWirePort(const std::vector<ConfigLine>& lines, bool tls_enabled);

}  // namespace tessera
