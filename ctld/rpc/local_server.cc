#include "ctld/rpc/local_server.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>

#include "ctld/log.h"
#include "rpc/controller_methods.h"
#include "rpc/grpc_util.h"
#include "rpc/local_wire.h"

namespace tessera::ctld::rpc {
namespace wire = tessera::rpc::local;

Result<std::unique_ptr<LocalServer>> LocalServer::Start(const std::string& path,
                                                        v1::Controller::Service* service,
                                                        LocalServerLimits limits) {
  sockaddr_un addr{};
  if (path.empty() || path[0] != '/' || path.size() >= sizeof addr.sun_path)
    return InvalidArgument("ControllerSocket '" + path + "' must be an absolute path under " +
                           std::to_string(sizeof addr.sun_path) + " bytes");
  std::error_code ec;
  auto dir = std::filesystem::path(path).parent_path();
  if (!std::filesystem::exists(dir)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Internal("cannot create " + dir.string() + ": " + ec.message());
    chmod(dir.c_str(), 0755);
  }
  auto probe = wire::Connect(path, 1000);
  if (probe.ok()) {
    close(*probe);
    return Status(Code::kAlreadyExists, path + " is answered by another process (a running tessera-ctld?)");
  }
  unlink(path.c_str());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(std::string("socket: ") + strerror(errno));
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, path.data(), path.size());
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || chmod(path.c_str(), 0666) != 0 ||
      listen(fd, 512) != 0) {
    Status s = Internal("cannot listen on " + path + ": " + strerror(errno));
    close(fd);
    return s;
  }
  return std::unique_ptr<LocalServer>(new LocalServer(path, fd, service, std::move(limits)));
}

template <typename Req, typename Resp>
void LocalServer::Add(const char* name,
                      grpc::Status (v1::Controller::Service::*method)(grpc::ServerContext*, const Req*, Resp*)) {
  handlers_[name] = [this, method, name](grpc::ServerContext* ctx, std::string_view in, std::string* out) {
    Req req;
    if (!req.ParseFromArray(in.data(), static_cast<int>(in.size())))
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          std::string("malformed ") + Req::descriptor()->name() + " for " + name);
    Resp resp;
    grpc::Status s = (service_->*method)(ctx, &req, &resp);
    if (s.ok()) resp.SerializeToString(out);
    return s;
  };
}

LocalServer::LocalServer(std::string path, int listen_fd, v1::Controller::Service* service,
                         LocalServerLimits limits)
    : path_(std::move(path)), listen_fd_(listen_fd), service_(service), limits_(std::move(limits)) {
  using S = v1::Controller::Service;
#define TESSERA_LOCAL_HANDLER(Name, Req, Resp) Add(#Name, &S::Name);
  TESSERA_CONTROLLER_UNARY_RPCS(TESSERA_LOCAL_HANDLER)
#undef TESSERA_LOCAL_HANDLER
  char h[256] = {};
  host_ = gethostname(h, sizeof h - 1) == 0 ? h : "localhost";
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

LocalServer::~LocalServer() {
  std::unique_lock<std::mutex> l(mu_);
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  for (const auto& [fd, uid] : open_) shutdown(fd, SHUT_RDWR);
  work_.notify_all();
  l.unlock();
  acceptor_.join();
  l.lock();
  idle_.wait(l, [this] { return workers_ == 0; });
  for (const Conn& c : ready_) close(c.fd);  // accepted while stopping: no worker took them
  close(listen_fd_);
  unlink(path_.c_str());
}

void LocalServer::AcceptLoop() {
  while (true) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    ucred cred{};
    socklen_t len = sizeof cred;
    bool have_cred = fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) {
      if (fd >= 0) close(fd);
      return;
    }
    if (fd < 0) {
      if (errno != EINTR && errno != ECONNABORTED) Log(std::string("local socket: accept: ") + strerror(errno));
      continue;
    }
    Status why = have_cred ? Admit(cred.uid) : Unavailable("the caller's identity is unknown");
    if (!why.ok()) {  // told before anything is read, so the command knows to take gRPC
      (void)wire::WriteRefusal(fd, why);
      LogRefusal(cred.uid, why);
      close(fd);
      continue;
    }
    open_[fd] = cred.uid;
    ++per_uid_[cred.uid];
    if (!limits_.privileged.count(cred.uid)) ++unprivileged_open_;
    Conn c{fd, cred.uid, cred.gid};
    if (ready_.size() < static_cast<size_t>(idle_workers_)) {
      ready_.push_back(c);
      work_.notify_one();
    } else {
      ++workers_;
      std::thread([this, c] { Work(c); }).detach();
    }
  }
}

Status LocalServer::Admit(uint32_t uid) {
  if (open_.size() >= static_cast<size_t>(limits_.total))
    return Status(Code::kResourceExhausted, "the controller's local socket is full (" +
                                                std::to_string(limits_.total) + " connections)");
  if (limits_.privileged.count(uid)) return Status::Ok();
  auto held = per_uid_.find(uid);
  if (held != per_uid_.end() && held->second >= limits_.per_uid)
    return Status(Code::kResourceExhausted, "too many connections from uid " + std::to_string(uid) +
                                                " on the controller's local socket (at most " +
                                                std::to_string(limits_.per_uid) + " at once)");
  if (unprivileged_open_ >= limits_.total - limits_.privileged_reserve)
    return Status(Code::kResourceExhausted,
                  "the controller's local socket is full for users (" +
                      std::to_string(limits_.total - limits_.privileged_reserve) +
                      " connections; the rest are kept for root and the cluster user)");
  return Status::Ok();
}

void LocalServer::LogRefusal(uint32_t uid, const Status& why) {
  auto now = std::chrono::steady_clock::now();
  auto& r = refusals_[uid];
  bool logged_before = r.last != std::chrono::steady_clock::time_point();
  if (logged_before && now - r.last < std::chrono::seconds(10)) {
    ++r.left_out;
    return;
  }
  std::string more = r.left_out ? " (and " + std::to_string(r.left_out) + " more refusals of uid " +
                                      std::to_string(uid) + " not logged)"
                                : "";
  Log("local socket: refusing a connection of uid " + std::to_string(uid) + ": " + why.message() +
      more);
  r.last = now;
  r.left_out = 0;
}

int LocalServer::IdleWorkers() {
  std::lock_guard<std::mutex> l(mu_);
  return idle_workers_;
}

int LocalServer::OpenConnections() {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(open_.size());
}

void LocalServer::Work(Conn c) {
  constexpr auto kIdle = std::chrono::seconds(30);
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    l.unlock();
    Serve(c.fd, c.uid, c.gid);
    l.lock();
    ++idle_workers_;
    bool got = work_.wait_for(l, kIdle, [this] { return stopping_ || !ready_.empty(); });
    --idle_workers_;
    if (!got || stopping_) break;
    c = ready_.front();
    ready_.pop_front();
  }
  --workers_;
  idle_.notify_all();
}

void LocalServer::Serve(int fd, uint32_t uid, uint32_t gid) {
  timeval tv{limits_.write_ms / 1000, (limits_.write_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);  // a caller that does not read
  const wire::ReadDeadlines deadlines{limits_.idle_ms, limits_.frame_ms};
  while (true) {
    auto payload = wire::ReadFrame(fd, wire::kMaxRequestFrame, deadlines);
    if (!payload.ok()) {  // kNotFound: closed, or idle; not worth a line
      if (payload.status().code() != Code::kNotFound)
        Log("local socket: dropping connection of uid " + std::to_string(uid) + ": " +
            payload.status().message());
      break;
    }
    Status s = Answer(fd, *payload, uid, gid);
    if (!s.ok()) {  // a caller gone before its answer (kUnavailable) is not worth a line
      if (s.code() != Code::kUnavailable)
        Log("local socket: dropping connection of uid " + std::to_string(uid) + ": " + s.message());
      break;
    }
  }
  std::lock_guard<std::mutex> l(mu_);
  close(fd);
  auto it = open_.find(fd);
  if (it != open_.end()) {
    if (--per_uid_[it->second] == 0) per_uid_.erase(it->second);
    if (!limits_.privileged.count(it->second)) --unprivileged_open_;
    open_.erase(it);
  }
  idle_.notify_all();
}

Status LocalServer::Answer(int fd, const std::string& payload, uint32_t uid, uint32_t gid) {
  std::string_view method, body;
  Status s = wire::ParseRequest(payload, &method, &body);
  if (!s.ok()) {
    (void)wire::WriteFrame(fd, wire::ResponseHead(s), {});
    return s;  // framing is broken: close
  }
  auto h = handlers_.find(method);
  if (h == handlers_.end())
    return wire::WriteFrame(fd, wire::ResponseHead(Status(Code::kUnimplemented,
                                "method '" + std::string(method) + "' is not served on the local socket")), {});
  LocalCallContext ctx(uid, gid, host_);
  std::string out;
  grpc::Status gs = h->second(&ctx, body, &out);
  if (!gs.ok()) return wire::WriteFrame(fd, wire::ResponseHead(tessera::rpc::FromGrpc(gs)), {});
  return wire::WriteFrame(fd, wire::ResponseHead(Status::Ok()), out);
}

}  // namespace tessera::ctld::rpc
