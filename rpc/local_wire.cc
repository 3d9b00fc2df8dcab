#include "rpc/local_wire.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace tessera::rpc::local {
namespace {

void PutU32(std::string* s, uint32_t v) {
  char b[4] = {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
               static_cast<char>(v >> 24)};
  s->append(b, 4);
}

uint32_t GetU32(const char* p) {
  auto u = reinterpret_cast<const unsigned char*>(p);
  return u[0] | (u[1] << 8) | (u[2] << 16) | (static_cast<uint32_t>(u[3]) << 24);
}

Status IoError(const char* what) {
  if (errno == EAGAIN || errno == EWOULDBLOCK)
    return Status(Code::kDeadlineExceeded, std::string(what) + ": timed out");
  return Status(Code::kUnavailable, std::string(what) + ": " + strerror(errno));
}

// Reads exactly n bytes; *eof_at_start is set when the peer closed before the first byte.
Status ReadFull(int fd, char* p, size_t n, bool* eof_at_start) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return IoError("read");
    if (r == 0) {
      if (got == 0 && eof_at_start) *eof_at_start = true;
      return Status(Code::kDataLoss, "connection closed in the middle of a frame");
    }
    got += static_cast<size_t>(r);
  }
  return Status::Ok();
}

}  // namespace

Status WriteFrame(int fd, std::string_view head, std::string_view body) {
  size_t total = head.size() + body.size();
  if (total > kMaxFrame) return Status(Code::kResourceExhausted, "frame of " + std::to_string(total) + " bytes is over the limit");
  std::string len;
  PutU32(&len, static_cast<uint32_t>(total));
  iovec iov[3] = {{len.data(), len.size()},
                  {const_cast<char*>(head.data()), head.size()},
                  {const_cast<char*>(body.data()), body.size()}};
  int first = 0;
  while (first < 3) {
    ssize_t w = writev(fd, iov + first, 3 - first);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return IoError("write");
    size_t left = static_cast<size_t>(w);
    while (first < 3 && left >= iov[first].iov_len) left -= iov[first++].iov_len;
    if (first < 3) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return Status::Ok();
}

Result<std::string> ReadFrame(int fd) {
  char lenb[4];
  bool eof = false;
  Status s = ReadFull(fd, lenb, 4, &eof);
  if (eof) return Status(Code::kNotFound, "connection closed");
  if (!s.ok()) return s;
  uint32_t n = GetU32(lenb);
  if (n > kMaxFrame) return Status(Code::kDataLoss, "frame length " + std::to_string(n) + " is over the limit");
  std::string payload(n, '\0');
  s = ReadFull(fd, payload.data(), n, nullptr);
  if (!s.ok()) return s;
  return payload;
}

std::string RequestHead(std::string_view method) {
  std::string h;
  h.push_back(static_cast<char>(method.size()));
  h.append(method);
  return h;
}

Status ParseRequest(std::string_view payload, std::string_view* method, std::string_view* body) {
  if (payload.empty()) return InvalidArgument("local request: empty frame");
  size_t n = static_cast<unsigned char>(payload[0]);
  if (n == 0 || payload.size() < 1 + n)
    return InvalidArgument("local request: method name of " + std::to_string(n) + " bytes does not fit the frame");
  *method = payload.substr(1, n);
  *body = payload.substr(1 + n);
  return Status::Ok();
}

std::string ResponseHead(const Status& status) {
  std::string h;
  PutU32(&h, static_cast<uint32_t>(status.code()));
  PutU32(&h, static_cast<uint32_t>(status.message().size()));
  h.append(status.message());
  return h;
}

Status ParseResponse(std::string_view payload, std::string_view* body) {
  if (payload.size() < 8) return Status(Code::kDataLoss, "local response: frame too short");
  uint32_t code = GetU32(payload.data());
  uint32_t mlen = GetU32(payload.data() + 4);
  if (payload.size() < 8 + static_cast<size_t>(mlen) || code > static_cast<uint32_t>(Code::kUnauthenticated))
    return Status(Code::kDataLoss, "local response: malformed status");
  if (code != 0) return Status(static_cast<Code>(code), std::string(payload.substr(8, mlen)));
  *body = payload.substr(8 + mlen);
  return Status::Ok();
}

Result<int> Connect(const std::string& path, int timeout_ms) {
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    return InvalidArgument("bad Unix socket path '" + path + "'");
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, path.data(), path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError("socket");
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    Status s = Status(Code::kUnavailable, "connect " + path + ": " + strerror(errno));
    close(fd);
    return s;
  }
  return fd;
}

Result<std::string> Call(int fd, std::string_view method, std::string_view request) {
  Status s = WriteFrame(fd, RequestHead(method), request);
  if (!s.ok()) return s;
  auto frame = ReadFrame(fd);
  if (!frame.ok()) {
    if (frame.status().code() == Code::kNotFound)
      return Status(Code::kUnavailable, "the controller closed the connection");
    return frame.status();
  }
  std::string_view body;
  s = ParseResponse(*frame, &body);
  if (!s.ok()) return s;
  return std::string(body);
}

}  // namespace tessera::rpc::local
