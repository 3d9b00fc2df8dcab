#include "rpc/wire_tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace tessera::rpc::wire {
namespace {

// Connects fd to `ai` within `ms`; 0 or errno.
int ConnectWithin(int fd, const addrinfo* ai, int ms) {
  int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
  int err = rc == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int r;
    do r = poll(&p, 1, ms); while (r < 0 && errno == EINTR);
    if (r == 0) {
      err = ETIMEDOUT;
    } else {
      socklen_t len = sizeof err;
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
  }
  fcntl(fd, F_SETFL, flags);
  return err;
}

}  // namespace

Result<int> ConnectTcp(const std::string& host, uint16_t port, int connect_ms, int io_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  int g = getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  if (g != 0) return InvalidArgument("cannot resolve '" + host + "': " + gai_strerror(g));
  std::string last = "no address";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last = strerror(errno);
      continue;
    }
    int err = ConnectWithin(fd, ai, connect_ms);
    if (err == 0) {
      freeaddrinfo(res);
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      timeval tv{io_ms / 1000, (io_ms % 1000) * 1000};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      return fd;
    }
    last = strerror(err);
    close(fd);
  }
  freeaddrinfo(res);
  return Unavailable("connect " + host + ":" + service + ": " + last);
}

Result<int> ListenTcp(const std::string& address, uint16_t port, uint16_t* bound) {
  bool v6 = address.find(':') != std::string::npos;
  sockaddr_storage ss{};
  socklen_t len;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    if (inet_pton(AF_INET6, address.c_str(), &a->sin6_addr) != 1)
      return InvalidArgument("'" + address + "' is not an IPv6 address");
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    std::string addr = address.empty() ? "0.0.0.0" : address;
    if (inet_pton(AF_INET, addr.c_str(), &a->sin_addr) != 1)
      return InvalidArgument("'" + address + "' is not an IPv4 address");
    len = sizeof *a;
  }
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(std::string("socket: ") + strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd, 512) != 0) {
    Status s = Unavailable("cannot listen on " + (address.empty() ? "0.0.0.0" : address) + ":" +
                           std::to_string(port) + ": " + strerror(errno));
    close(fd);
    return s;
  }
  if (bound) {
    sockaddr_storage got{};
    socklen_t gl = sizeof got;
    getsockname(fd, reinterpret_cast<sockaddr*>(&got), &gl);
    *bound = ntohs(got.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&got)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&got)->sin_port);
  }
  return fd;
}

void PeerName(int fd, std::string* peer, std::string* address) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  char text[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    if (ss.ss_family == AF_INET6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
      port = ntohs(a->sin6_port);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
      port = ntohs(a->sin_port);
    }
  }
  *address = text;
  *peer = std::string(ss.ss_family == AF_INET6 ? "ipv6:[" : "ipv4:") + text +
          (ss.ss_family == AF_INET6 ? "]:" : ":") + std::to_string(port);
}

}  // namespace tessera::rpc::wire
