// Stdin pipes of a step's tasks. See task_stdin.h.
#include "noded/task_stdin.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace tessera::noded {

TaskStdin::~TaskStdin() { CloseAll(); }

void TaskStdin::Add(uint32_t rank, int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  std::lock_guard<std::mutex> lock(mu_);
  Pipe& p = pipes_[rank];
  if (p.fd >= 0) ::close(p.fd);
  p.fd = fd;
}

bool TaskStdin::empty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pipes_.empty();
}

void TaskStdin::WriteSome(Pipe& p) {
  while (p.fd >= 0 && !p.queue.empty()) {
    ssize_t n = ::write(p.fd, p.queue.data(), p.queue.size());
    if (n > 0) {
      p.queue.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;  // full: Flush goes on when it is writable
    ::close(p.fd);  // EPIPE: nobody reads it any more
    p.fd = -1;
    p.queue.clear();
  }
  if (p.fd >= 0 && eof_ && p.queue.empty()) ::close(p.fd), p.fd = -1;
}

Status TaskStdin::Push(const std::string& data, bool eof) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [rank, p] : pipes_)
    if (p.fd >= 0 && !data.empty() && p.queue.size() > limit_)
      return Status(Code::kUnavailable, "task " + std::to_string(rank) +
                                            " does not read its stdin; try again later");
  eof_ = eof_ || eof;
  for (auto& [rank, p] : pipes_) {
    if (p.fd < 0) continue;
    p.queue += data;
    WriteSome(p);
  }
  return Status::Ok();
}

void TaskStdin::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [rank, p] : pipes_) WriteSome(p);
}

void TaskStdin::PollFds(std::vector<pollfd>* fds) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [rank, p] : pipes_)
    if (p.fd >= 0 && !p.queue.empty()) fds->push_back({p.fd, POLLOUT, 0});
}

void TaskStdin::Drop(uint32_t rank) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pipes_.find(rank);
  if (it == pipes_.end()) return;
  if (it->second.fd >= 0) ::close(it->second.fd);
  it->second.fd = -1;
  it->second.queue.clear();
}

void TaskStdin::CloseAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [rank, p] : pipes_) {
    if (p.fd >= 0) ::close(p.fd);
    p.fd = -1;
    p.queue.clear();
  }
}

}  // namespace tessera::noded
