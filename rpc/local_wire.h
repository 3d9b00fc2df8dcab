#pragma once
// The controller's local wire: unary calls over a Unix stream socket on the controller's host.
//
// Why: a user command is a short process. Over gRPC it pays for gRPC's threads, an HTTP/2
// connection and a munge round trip on every call (bench/RESULTS.md has the figures); over this
// socket it pays for one connect and two small writes. The caller's identity is the kernel's
// (SO_PEERCRED on the server side), so no credential travels. Remote callers keep using gRPC.
//
// Frames: u32 little-endian length, then the payload.
//   request payload:  u8 method-name length, method name (e.g. "SubmitJob"), request proto bytes
//   response payload: u32 status code (tessera::Code; bit 31 set on a refusal, below), u32
//                     message length, message, response proto bytes (empty unless the code is kOk)
// A connection carries any number of calls, one at a time.
//
// Bounds (rpc/message_limits.h says where they come from): a request frame is at most
// kMaxRequestFrame = 64 MiB, the size of the largest request ctld accepts over gRPC (one job spec
// with a 4 MiB script and a 16 MiB environment fits; a bulk SubmitJobs over it is split by the
// client, rpc/submit_split.h); a response frame at most kMaxResponseFrame = 256 MiB. A reader
// refuses a header announcing more before reading on, and never allocates ahead of the bytes that
// arrived: its buffer grows in chunks of kReadChunk as they come (at most twice the bytes received
// plus one chunk), so a header announcing 64 MiB followed by nothing costs a few KiB.
//
// Refusal: a server that will not serve a connection (too many from the caller's uid, the socket
// full) writes one response frame with bit 31 of the code set, then closes, before reading
// anything. The client knows its request was not run and may take another way (gRPC).
//
// Over TCP (ControllerWirePort, rpc/wire_tcp.h: commands on login nodes) the kernel cannot vouch
// for the caller, so every request carries a fresh munge credential after the method name:
//   request payload:  u8 method-name length, method name, u16 little-endian credential length
//                     (1..kMaxCredential), credential, request proto bytes
// The server decodes it per request (munged rejects invalid, expired and replayed credentials)
// and runs the call as the decoded uid/gid. Over TCP a server learns the caller only from its
// first request, so a refusal there may come after that request was read; it is still a refusal
// frame, and the request was not run.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "rpc/message_limits.h"

namespace tessera::rpc::local {

constexpr uint32_t kMaxRequestFrame = kMaxRequestBytes;
constexpr uint32_t kMaxResponseFrame = kMaxResponseBytes;
constexpr size_t kReadChunk = 64 << 10;
constexpr uint32_t kRefusedBit = 1u << 31;
constexpr size_t kMaxCredential = 8192;  // as a gRPC call's x-tessera-munge entry (grpc_util.h)

// Writes one frame (head and body concatenated) completely; never raises SIGPIPE (a peer that
// closed gives kUnavailable). Retries EINTR. kResourceExhausted when the frame is over
// kMaxResponseFrame (nothing written).
Status WriteFrame(int fd, std::string_view head, std::string_view body);

// How long ReadFrame waits; -1 leaves it to the socket's SO_RCVTIMEO (or forever).
struct ReadDeadlines {
  int idle_ms = -1;   // for the first byte of the frame
  int frame_ms = -1;  // for the rest of the frame, counted from its first byte
};
// Reads one frame of at most `max_frame` bytes. kNotFound when the peer closed the connection
// before a new frame, or started none within idle_ms (when set); kDataLoss on a short frame or
// a header announcing more than `max_frame` (the payload is then not read); kDeadlineExceeded
// when a deadline (or socket timeout) passed; kUnavailable on a socket error. `*capacity`, when
// given, is the buffer's capacity at the end (tests check that it stays near the bytes received).
Result<std::string> ReadFrame(int fd, uint32_t max_frame, ReadDeadlines deadlines = {},
                              size_t* capacity = nullptr);

std::string RequestHead(std::string_view method);
// Splits a request payload into method and body; kInvalidArgument names what is malformed.
Status ParseRequest(std::string_view payload, std::string_view* method, std::string_view* body);
// The TCP form (above): the head with a credential of 1..kMaxCredential bytes.
std::string RequestHead(std::string_view method, std::string_view credential);
// Splits a TCP request payload; kInvalidArgument names what is malformed (kUnauthenticated
// when the credential is empty or over kMaxCredential: `*method` is then set).
Status ParseRequest(std::string_view payload, std::string_view* method,
                    std::string_view* credential, std::string_view* body);

std::string ResponseHead(const Status& status);
// Splits a response payload; returns the remote status, and the body when it is OK. `*refused`
// (when given) tells whether the frame is a refusal (the status is then not OK).
Status ParseResponse(std::string_view payload, std::string_view* body, bool* refused = nullptr);

// Server side: sends a refusal frame carrying `why` without blocking (a fresh connection's
// buffer has room); the caller closes the connection afterwards.
Status WriteRefusal(int fd, const Status& why);

// Client side: connects to `path` with send/receive timeouts of `timeout_ms`. kUnavailable when
// nothing listens there.
Result<int> Connect(const std::string& path, int timeout_ms);
// One call on a connected fd: sends `method` + `request`, returns the response body.
// `*not_run` (when given) is set when the server provably did not run the request: it refused
// the connection, or closed it before reading the request (the write failed, or the read was
// reset before any answer). The caller may then retry elsewhere without running it twice.
// `credential` (when given: the TCP wire) goes into the request head.
Result<std::string> Call(int fd, std::string_view method, std::string_view request,
                         bool* not_run = nullptr, const std::string* credential = nullptr);
// True when the server has closed (or written on) an idle connection: it must not be reused.
bool PeerClosed(int fd);

}  // namespace tessera::rpc::local
