#pragma once
// The controller's local wire: unary calls over a Unix stream socket on the controller's host.
//
// Why: a user command is a short process. Over gRPC it pays for gRPC's threads, an HTTP/2
// connection and a munge round trip on every call (bench/RESULTS.md has the figures); over this
// socket it pays for one connect and two small writes. The caller's identity is the kernel's
// (SO_PEERCRED on the server side), so no credential travels. Remote callers keep using gRPC.
//
// Frames: u32 little-endian length, then the payload (at most kMaxFrame bytes).
//   request payload:  u8 method-name length, method name (e.g. "SubmitJob"), request proto bytes
//   response payload: u32 status code (tessera::Code), u32 message length, message, response
//                     proto bytes (empty unless the code is kOk)
// A connection carries any number of calls, one at a time.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::rpc::local {

constexpr uint32_t kMaxFrame = 256u << 20;

// Writes one frame (head and body concatenated) completely. Retries EINTR.
Status WriteFrame(int fd, std::string_view head, std::string_view body);
// Reads one frame. kNotFound when the peer closed the connection before a new frame; kDataLoss
// on a short or oversized frame; kDeadlineExceeded when a socket timeout fired.
Result<std::string> ReadFrame(int fd);

std::string RequestHead(std::string_view method);
// Splits a request payload into method and body; kInvalidArgument names what is malformed.
Status ParseRequest(std::string_view payload, std::string_view* method, std::string_view* body);

std::string ResponseHead(const Status& status);
// Splits a response payload; returns the remote status, and the body when it is OK.
Status ParseResponse(std::string_view payload, std::string_view* body);

// Client side: connects to `path` with send/receive timeouts of `timeout_ms`. kUnavailable when
// nothing listens there.
Result<int> Connect(const std::string& path, int timeout_ms);
// One call on a connected fd: sends `method` + `request`, returns the response body.
Result<std::string> Call(int fd, std::string_view method, std::string_view request);

}  // namespace tessera::rpc::local
