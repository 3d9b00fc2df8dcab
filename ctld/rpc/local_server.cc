#include "ctld/rpc/local_server.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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
#include "rpc/wire_tcp.h"

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

Result<std::unique_ptr<LocalServer>> LocalServer::StartTcp(
    const std::string& address, uint16_t port, v1::Controller::Service* service,
    const tessera::rpc::CredentialCodec* codec, LocalServerLimits limits) {
  uint16_t bound = 0;
  auto fd = tessera::rpc::wire::ListenTcp(address, port, &bound);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<LocalServer>(
      new LocalServer("", *fd, service, std::move(limits), codec, bound));
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
                         LocalServerLimits limits, const tessera::rpc::CredentialCodec* codec,
                         uint16_t port)
    : path_(std::move(path)), listen_fd_(listen_fd), codec_(codec), port_(port),
      service_(service), limits_(std::move(limits)) {
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
  if (!path_.empty()) unlink(path_.c_str());
}

std::string LocalServer::Name() const {
  return codec_ ? "wire port " + std::to_string(port_) : "local socket";
}

void LocalServer::AcceptLoop() {
  while (true) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    Conn c{fd, kUnknownUid, kUnknownUid, "", ""};
    bool have_cred = false;
    if (fd >= 0 && codec_) {  // TCP: the caller is known from its first request's credential
      tessera::rpc::wire::PeerName(fd, &c.peer, &c.address);
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    } else if (fd >= 0) {
      ucred cred{};
      socklen_t len = sizeof cred;
      have_cred = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
      c.uid = cred.uid;
      c.gid = cred.gid;
    }
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) {
      if (fd >= 0) close(fd);
      return;
    }
    if (fd < 0) {
      if (errno != EINTR && errno != ECONNABORTED) Log(Name() + ": accept: " + strerror(errno));
      continue;
    }
    Status why = codec_ || have_cred ? Admit(c.uid) : Unavailable("the caller's identity is unknown");
    if (!why.ok()) {  // told before anything is read, so the command knows to take gRPC
      (void)wire::WriteRefusal(fd, why);
      LogRefusal(c.uid, why);
      close(fd);
      continue;
    }
    open_[fd] = kUnknownUid;
    if (c.uid != kUnknownUid) Book(fd, c.uid);
    if (ready_.size() < static_cast<size_t>(idle_workers_)) {
      ready_.push_back(c);
      work_.notify_one();
    } else {
      ++workers_;
      std::thread([this, c] { Work(c); }).detach();
    }
  }
}

Status LocalServer::Admit(uint32_t uid, bool counted) {
  std::string where = codec_ ? "the controller's wire port" : "the controller's local socket";
  if (!counted && open_.size() >= static_cast<size_t>(limits_.total))
    return Status(Code::kResourceExhausted, where + " is full (" +
                                                std::to_string(limits_.total) + " connections)");
  if (limits_.privileged.count(uid)) return Status::Ok();
  auto held = per_uid_.find(uid);
  if (uid != kUnknownUid && held != per_uid_.end() && held->second >= limits_.per_uid)
    return Status(Code::kResourceExhausted, "too many connections from uid " + std::to_string(uid) +
                                                " on " + where + " (at most " +
                                                std::to_string(limits_.per_uid) + " at once)");
  if (unprivileged_open_ >= limits_.total - limits_.privileged_reserve)
    return Status(Code::kResourceExhausted,
                  where + " is full for users (" +
                      std::to_string(limits_.total - limits_.privileged_reserve) +
                      " connections; the rest are kept for root and the cluster user)");
  return Status::Ok();
}

void LocalServer::Book(int fd, uint32_t uid) {
  open_[fd] = uid;
  ++per_uid_[uid];
  if (!limits_.privileged.count(uid)) ++unprivileged_open_;
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
  std::string who = uid == kUnknownUid ? "an unidentified caller" : "uid " + std::to_string(uid);
  Log(Name() + ": refusing a connection of " + who + ": " + why.message() + more);
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
    Serve(std::move(c));
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

void LocalServer::Serve(Conn c) {
  const int fd = c.fd;
  timeval tv{limits_.write_ms / 1000, (limits_.write_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);  // a caller that does not read
  const wire::ReadDeadlines deadlines{limits_.idle_ms, limits_.frame_ms};
  while (true) {
    auto payload = wire::ReadFrame(fd, wire::kMaxRequestFrame, deadlines);
    if (!payload.ok()) {  // kNotFound: closed, or idle; not worth a line
      if (payload.status().code() != Code::kNotFound)
        Log(Name() + ": dropping connection of " + Who(c) + ": " + payload.status().message());
      break;
    }
    bool logged = false;
    Status s = codec_ ? AnswerTcp(&c, *payload, &logged) : Answer(fd, *payload, c.uid, c.gid);
    if (!s.ok()) {  // a caller gone before its answer (kUnavailable) is not worth a line
      if (s.code() != Code::kUnavailable && !logged)
        Log(Name() + ": dropping connection of " + Who(c) + ": " + s.message());
      break;
    }
  }
  std::lock_guard<std::mutex> l(mu_);
  close(fd);
  auto it = open_.find(fd);
  if (it != open_.end()) {
    if (it->second != kUnknownUid) {
      if (--per_uid_[it->second] == 0) per_uid_.erase(it->second);
      if (!limits_.privileged.count(it->second)) --unprivileged_open_;
    }
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
  LocalCallContext ctx(uid, gid, host_);
  return Run(fd, method, body, &ctx);
}

Status LocalServer::Run(int fd, std::string_view method, std::string_view body,
                        LocalCallContext* ctx) {
  auto h = handlers_.find(method);
  if (h == handlers_.end())
    return wire::WriteFrame(fd, wire::ResponseHead(Status(Code::kUnimplemented,
                                "method '" + std::string(method) + "' is not served on the " + Name())), {});
  std::string out;
  grpc::Status gs = h->second(ctx, body, &out);
  if (!gs.ok()) return wire::WriteFrame(fd, wire::ResponseHead(tessera::rpc::FromGrpc(gs)), {});
  return wire::WriteFrame(fd, wire::ResponseHead(Status::Ok()), out);
}

std::string LocalServer::Who(const Conn& c) const {
  std::string uid = c.uid == kUnknownUid ? "" : "uid " + std::to_string(c.uid);
  if (!codec_) return uid;
  return uid.empty() ? c.peer : uid + " at " + c.peer;
}

Status LocalServer::AnswerTcp(Conn* c, const std::string& payload, bool* logged) {
  std::string_view method, cred, body;
  Status s = wire::ParseRequest(payload, &method, &cred, &body);
  Result<tessera::rpc::Identity> id = s.ok() ? codec_->Decode(std::string(cred)) : Result<tessera::rpc::Identity>(s);
  if (!id.ok()) {  // as Authorizer::Check: refused, logged; the connection is closed
    Status why = id.status();
    if (why.code() == Code::kUnauthenticated || why.code() == Code::kUnavailable) {
      Log(std::string("auth: refused ") + std::string(method.empty() ? "a call" : method) +
          " from " + Name() + " " + c->peer + ": " + why.message());
      *logged = true;
    }
    (void)wire::WriteFrame(c->fd, wire::ResponseHead(why), {});
    return why;
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    if (c->uid == kUnknownUid) {  // the first request: the per-uid limits apply from now on
      Status why = Admit(id->uid, /*counted=*/true);
      if (!why.ok()) {  // not run: the command takes gRPC
        (void)wire::WriteRefusal(c->fd, why);
        LogRefusal(id->uid, why);
        *logged = true;
        return why;
      }
      Book(c->fd, id->uid);
      c->uid = id->uid;
      c->gid = id->gid;
    }
  }
  if (id->uid != c->uid) {
    Status why = PermissionDenied("a connection to the wire port carries the calls of one user (uid " +
                                  std::to_string(c->uid) + "), not of uid " + std::to_string(id->uid));
    Log("auth: refused " + std::string(method) + " from " + Name() + " " + c->peer + ": " + why.message());
    *logged = true;
    (void)wire::WriteFrame(c->fd, wire::ResponseHead(why), {});
    return why;
  }
  LocalCallContext ctx(id->uid, id->gid, c->address, "wire " + c->peer, id->origin);
  return Run(c->fd, method, body, &ctx);
}

}  // namespace tessera::ctld::rpc
