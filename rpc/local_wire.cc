#include "rpc/local_wire.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

namespace tessera::rpc::local {
namespace {

using SteadyClock = std::chrono::steady_clock;

void PutU32(std::string* s, uint32_t v) {
  char b[4] = {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
               static_cast<char>(v >> 24)};
  s->append(b, 4);
}

uint32_t GetU32(const char* p) {
  auto u = reinterpret_cast<const unsigned char*>(p);
  return u[0] | (u[1] << 8) | (u[2] << 16) | (static_cast<uint32_t>(u[3]) << 24);
}

Status IoError(const char* what, int err) {
  if (err == EAGAIN || err == EWOULDBLOCK)
    return Status(Code::kDeadlineExceeded, std::string(what) + ": timed out");
  return Status(Code::kUnavailable, std::string(what) + ": " + strerror(err));
}

// Waits until fd is readable or `deadline` passes (none when `has_deadline` is false).
Status WaitReadable(int fd, bool has_deadline, SteadyClock::time_point deadline) {
  if (!has_deadline) return Status::Ok();
  while (true) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) return Status(Code::kDeadlineExceeded, "read: timed out");
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(left.count()));
    if (r > 0) return Status::Ok();
    if (r < 0 && errno != EINTR) return IoError("poll", errno);
  }
}

// One read of up to n bytes; with a deadline, waits (poll) only when nothing is there yet, so a
// request that has arrived costs one system call. 0 = the peer closed. *err = errno.
ssize_t ReadSome(int fd, char* p, size_t n, bool has_deadline, SteadyClock::time_point deadline,
                 Status* s, int* err) {
  while (true) {
    ssize_t r = has_deadline ? recv(fd, p, n, MSG_DONTWAIT) : read(fd, p, n);
    if (r >= 0) return r;
    if (errno == EINTR) continue;
    if (has_deadline && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      *s = WaitReadable(fd, has_deadline, deadline);
      if (!s->ok()) return -1;
      continue;
    }
    *err = errno;
    *s = IoError("read", errno);
    return -1;
  }
}

SteadyClock::time_point After(int ms) { return SteadyClock::now() + std::chrono::milliseconds(ms); }

// ReadFrame's work; *err is the errno of a failed read (0 otherwise).
Result<std::string> ReadFrameImpl(int fd, uint32_t max_frame, ReadDeadlines d, size_t* capacity,
                                  int* err) {
  *err = 0;
  char lenb[4];
  size_t got = 0;
  Status s;
  auto deadline = After(d.idle_ms);
  bool timed = d.idle_ms >= 0;
  while (got < 4) {
    ssize_t r = ReadSome(fd, lenb + got, 4 - got, timed, deadline, &s, err);
    if (r < 0 && got == 0 && s.code() == Code::kDeadlineExceeded && d.idle_ms >= 0)
      return Status(Code::kNotFound, "connection idle for " + std::to_string(d.idle_ms) + " ms");
    if (r < 0) return s;
    if (r == 0) {
      if (got == 0) return Status(Code::kNotFound, "connection closed");
      return Status(Code::kDataLoss, "connection closed in the middle of a frame");
    }
    if (got == 0 && d.frame_ms >= 0) {  // the frame started: the rest has its own deadline
      deadline = After(d.frame_ms);
      timed = true;
    }
    got += static_cast<size_t>(r);
  }
  uint32_t n = GetU32(lenb);
  if (n > max_frame)
    return Status(Code::kDataLoss, "frame length " + std::to_string(n) + " is over the limit of " +
                                       std::to_string(max_frame) + " bytes");
  std::string payload;
  char chunk[kReadChunk];
  while (payload.size() < n) {  // grows only by what arrived: never ahead of the peer
    ssize_t r = ReadSome(fd, chunk, std::min<size_t>(n - payload.size(), kReadChunk), timed,
                         deadline, &s, err);
    if (r == 0) s = Status(Code::kDataLoss, "connection closed in the middle of a frame");
    if (r <= 0) {
      if (capacity) *capacity = payload.capacity();
      return s;
    }
    payload.append(chunk, static_cast<size_t>(r));
  }
  if (capacity) *capacity = payload.capacity();
  return payload;
}

}  // namespace

Status WriteFrame(int fd, std::string_view head, std::string_view body) {
  size_t total = head.size() + body.size();
  if (total > kMaxResponseFrame)
    return Status(Code::kResourceExhausted,
                  "frame of " + std::to_string(total) + " bytes is over the limit");
  std::string len;
  PutU32(&len, static_cast<uint32_t>(total));
  iovec iov[3] = {{len.data(), len.size()},
                  {const_cast<char*>(head.data()), head.size()},
                  {const_cast<char*>(body.data()), body.size()}};
  int first = 0;
  while (first < 3) {
    msghdr msg{};
    msg.msg_iov = iov + first;
    msg.msg_iovlen = static_cast<size_t>(3 - first);
    ssize_t w = sendmsg(fd, &msg, MSG_NOSIGNAL);  // a closed peer is an error, not a SIGPIPE
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return IoError("write", errno);
    size_t left = static_cast<size_t>(w);
    while (first < 3 && left >= iov[first].iov_len) left -= iov[first++].iov_len;
    if (first < 3) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return Status::Ok();
}

Result<std::string> ReadFrame(int fd, uint32_t max_frame, ReadDeadlines deadlines,
                              size_t* capacity) {
  int err = 0;
  return ReadFrameImpl(fd, max_frame, deadlines, capacity, &err);
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
    return InvalidArgument("local request: method name of " + std::to_string(n) +
                           " bytes does not fit the frame");
  *method = payload.substr(1, n);
  *body = payload.substr(1 + n);
  return Status::Ok();
}

std::string RequestHead(std::string_view method, std::string_view credential) {
  std::string h = RequestHead(method);
  h.push_back(static_cast<char>(credential.size() & 0xff));
  h.push_back(static_cast<char>((credential.size() >> 8) & 0xff));
  h.append(credential);
  return h;
}

Status ParseRequest(std::string_view payload, std::string_view* method,
                    std::string_view* credential, std::string_view* body) {
  std::string_view rest;
  TESSERA_RETURN_IF_ERROR(ParseRequest(payload, method, &rest));
  if (rest.size() < 2)
    return InvalidArgument("wire request: no credential length after the method name");
  auto u = reinterpret_cast<const unsigned char*>(rest.data());
  size_t n = u[0] | (static_cast<size_t>(u[1]) << 8);
  if (n == 0) return Unauthenticated("request carries no munge credential");
  if (n > kMaxCredential) return Unauthenticated("munge credential too large");
  if (rest.size() < 2 + n)
    return InvalidArgument("wire request: credential of " + std::to_string(n) +
                           " bytes does not fit the frame");
  *credential = rest.substr(2, n);
  *body = rest.substr(2 + n);
  return Status::Ok();
}

std::string ResponseHead(const Status& status) {
  std::string h;
  PutU32(&h, static_cast<uint32_t>(status.code()));
  PutU32(&h, static_cast<uint32_t>(status.message().size()));
  h.append(status.message());
  return h;
}

Status ParseResponse(std::string_view payload, std::string_view* body, bool* refused) {
  if (payload.size() < 8) return Status(Code::kDataLoss, "local response: frame too short");
  uint32_t code = GetU32(payload.data());
  uint32_t mlen = GetU32(payload.data() + 4);
  bool refusal = (code & kRefusedBit) != 0;
  code &= ~kRefusedBit;
  if (payload.size() < 8 + static_cast<size_t>(mlen) ||
      code > static_cast<uint32_t>(Code::kUnauthenticated) || (refusal && code == 0))
    return Status(Code::kDataLoss, "local response: malformed status");
  if (refused) *refused = refusal;
  if (code != 0) return Status(static_cast<Code>(code), std::string(payload.substr(8, mlen)));
  *body = payload.substr(8 + mlen);
  return Status::Ok();
}

Status WriteRefusal(int fd, const Status& why) {
  std::string head = ResponseHead(why.ok() ? Status(Code::kUnavailable, "refused") : why);
  uint32_t code = GetU32(head.data()) | kRefusedBit;
  std::string frame;
  PutU32(&frame, static_cast<uint32_t>(head.size()));
  PutU32(&frame, code);
  frame.append(head, 4);
  ssize_t w = send(fd, frame.data(), frame.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (w < 0) return IoError("write", errno);
  if (static_cast<size_t>(w) != frame.size())
    return Status(Code::kUnavailable, "write: refusal cut short");
  return Status::Ok();
}

Result<int> Connect(const std::string& path, int timeout_ms) {
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    return InvalidArgument("bad Unix socket path '" + path + "'");
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, path.data(), path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError("socket", errno);
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

Result<std::string> Call(int fd, std::string_view method, std::string_view request,
                         bool* not_run, const std::string* credential) {
  bool dummy = false;
  if (!not_run) not_run = &dummy;
  *not_run = false;
  size_t head = 1 + method.size() + (credential ? 2 + credential->size() : 0);
  if (head + request.size() > kMaxRequestFrame)
    return Status(Code::kResourceExhausted,
                  std::string(method) + " request of " + std::to_string(request.size()) +
                      " bytes is over the limit of " + std::to_string(kMaxRequestFrame));
  Status s = WriteFrame(fd, credential ? RequestHead(method, *credential) : RequestHead(method),
                       request);
  if (!s.ok() && s.code() != Code::kUnavailable) return s;  // too big, or the server is stuck
  bool write_failed = !s.ok();                              // the server closed: not run
  int err = 0;
  auto frame = ReadFrameImpl(fd, kMaxResponseFrame, {}, nullptr, &err);
  if (!frame.ok()) {
    *not_run = write_failed || err == ECONNRESET;  // reset: it closed with our request unread
    if (write_failed) return s;
    if (frame.status().code() == Code::kNotFound)
      return Status(Code::kUnavailable, "the controller closed the connection");
    return frame.status();
  }
  std::string_view body;
  bool refused = false;
  s = ParseResponse(*frame, &body, &refused);
  *not_run = refused || write_failed;
  if (!s.ok()) return s;
  if (write_failed)
    return Status(Code::kDataLoss, "local response: an answer to a request not sent");
  return std::string(body);
}

bool PeerClosed(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  return poll(&p, 1, 0) > 0;
}

}  // namespace tessera::rpc::local
