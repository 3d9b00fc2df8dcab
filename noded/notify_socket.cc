#include "noded/notify_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tessera::noded {
namespace {

Result<sockaddr_un> Address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    return InvalidArgument("socket path too long (max " + std::to_string(sizeof addr.sun_path - 1) +
                           " bytes): " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

}  // namespace

Result<int> BindNotifySocket(const std::string& path) {
  auto addr = Address(path);
  if (!addr.ok()) return addr.status();
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(std::string("socket: ") + std::strerror(errno));
  ::unlink(path.c_str());
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0) {
    Status st = Internal("cannot bind " + path + ": " + std::strerror(errno));
    ::close(fd);
    return st;
  }
  ::chmod(path.c_str(), 0600);
  return fd;
}

std::vector<uint64_t> ReceiveNotify(int fd, int timeout_ms) {
  std::vector<uint64_t> ids;
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return ids;
  char buf[64];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT)) >= 0;) {
    buf[n] = '\0';
    char* end = nullptr;
    unsigned long long id = std::strtoull(buf, &end, 10);
    if (end != buf && id != 0) ids.push_back(id);
  }
  return ids;
}

Status SendNotify(const std::string& path, uint64_t job_id) {
  auto addr = Address(path);
  if (!addr.ok()) return addr.status();
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(std::string("socket: ") + std::strerror(errno));
  timeval tv{0, kNotifySendTimeoutMs * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  std::string msg = std::to_string(job_id);
  ssize_t n;
  do {
    n = ::sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<const sockaddr*>(&*addr),
                 sizeof *addr);
  } while (n < 0 && errno == EINTR);
  Status st = n < 0 ? Unavailable("cannot notify " + path + ": " + std::strerror(errno))
                    : Status::Ok();
  ::close(fd);
  return st;
}

}  // namespace tessera::noded
