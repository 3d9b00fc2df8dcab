#pragma once
// LocalServer: the controller's unary RPCs on a Unix socket, for commands run on the controller's
// own host (wire format in rpc/local_wire.h). The same service object answers as over gRPC; the
// caller's uid/gid come from SO_PEERCRED (LocalCallContext) instead of a munge credential, and
// the per-method authorization is the same (ControllerService::Check). Streaming RPCs stay
// gRPC-only.
//
// One thread accepts; each connection is served by one worker thread, calls one after another.
// Workers are kept for the next connection (idle ones exit after 30 s): a command's call then
// costs no thread creation. At most 256 connections are served at once (more are closed and
// logged), and a connection silent for 60 s is closed. Destruction stops accepting, shuts every
// open connection down, waits for the workers and removes the socket file.
#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "common/status.h"
#include "tessera/v1/controller.grpc.pb.h"

namespace tessera::ctld::rpc {

// The context a local call runs under: identity from the kernel.
class LocalCallContext : public grpc::ServerContext {
 public:
  LocalCallContext(uint32_t uid, uint32_t gid, std::string host)
      : uid_(uid), gid_(gid), host_(std::move(host)) {}
  uint32_t uid() const { return uid_; }
  uint32_t gid() const { return gid_; }
  const std::string& host() const { return host_; }  // this host's name

 private:
  uint32_t uid_, gid_;
  std::string host_;
};

class LocalServer {
 public:
  // Listens on `path`: creates its directory (0755), refuses when another process answers
  // there, replaces a stale socket file, makes the socket 0666 (the kernel says who connects).
  static Result<std::unique_ptr<LocalServer>> Start(const std::string& path,
                                                    v1::Controller::Service* service);
  ~LocalServer();
  LocalServer(const LocalServer&) = delete;
  // Worker threads waiting for a connection (diagnostics, tests).
  int IdleWorkers();
  LocalServer& operator=(const LocalServer&) = delete;

 private:
  using Handler = std::function<grpc::Status(grpc::ServerContext*, std::string_view, std::string*)>;
  LocalServer(std::string path, int listen_fd, v1::Controller::Service* service);
  template <typename Req, typename Resp>
  void Add(const char* name, grpc::Status (v1::Controller::Service::*method)(grpc::ServerContext*,
                                                                             const Req*, Resp*));
  void AcceptLoop();
  // A worker: serves `fd`, then waits for the next accepted connection.
  void Work(int fd);
  void Serve(int fd);
  // One request payload -> one response frame.
  Status Answer(int fd, const std::string& payload, uint32_t uid, uint32_t gid);

  std::string path_;
  std::string host_;
  int listen_fd_;
  v1::Controller::Service* service_;
  std::map<std::string, Handler, std::less<>> handlers_;
  std::mutex mu_;
  std::condition_variable idle_;  // a connection or a worker ended
  std::condition_variable work_;  // ready_ has a connection, or stopping_
  std::set<int> open_;            // accepted connections, not yet closed
  std::deque<int> ready_;         // accepted, waiting for an idle worker
  int workers_ = 0;               // live worker threads
  int idle_workers_ = 0;          // of which waiting in work_
  bool stopping_ = false;
  std::thread acceptor_;
};

}  // namespace tessera::ctld::rpc
