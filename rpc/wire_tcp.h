#pragma once
// The controller's wire over TCP (issue 20 §1): the local socket's framing (rpc/local_wire.h)
// with a munge credential in every request, served by ctld on ControllerWirePort beside gRPC, for
// one-shot commands on login nodes. Why: a command over gRPC pays gRPC's start-up (threads, an
// HTTP/2 connection, its shutdown) for one call; over this it pays a connect and two writes.
// Security is gRPC+munge's without TLS: the credential names the caller (munged rejects invalid,
// expired and replayed ones), nothing is encrypted. So it is only served, and only used, when
// TLS is not configured (common/wire_config.h refuses ControllerWirePort with the Tls keys).
#include <cstdint>
#include <string>

#include "common/status.h"

namespace tessera::rpc::wire {

// Connects to host:port (a name or an address; each address getaddrinfo gives is tried in turn)
// within `connect_ms` per address, with TCP_NODELAY and send/receive timeouts of `io_ms`.
// kUnavailable when nothing accepts (refused, unreachable, timed out): the command then takes
// gRPC; kInvalidArgument when the name does not resolve.
Result<int> ConnectTcp(const std::string& host, uint16_t port, int connect_ms, int io_ms);

// A listening TCP socket on address:port ("" or "0.0.0.0" = every IPv4 address; an IPv6
// literal listens on IPv6), SO_REUSEADDR, CLOEXEC. `*bound` (when given) gets the port bound
// (port 0 = any free port: tests).
Result<int> ListenTcp(const std::string& address, uint16_t port, uint16_t* bound = nullptr);

// "ipv4:10.0.0.5:40022" (gRPC's peer form) and the bare address "10.0.0.5" of a connected fd.
void PeerName(int fd, std::string* peer, std::string* address);

}  // namespace tessera::rpc::wire
