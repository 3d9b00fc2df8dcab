#pragma once
// LocalServer: the controller's unary RPCs on a Unix socket, for commands run on the controller's
// own host (wire format in rpc/local_wire.h). The same service object answers as over gRPC; the
// caller's uid/gid come from SO_PEERCRED (LocalCallContext) instead of a munge credential, and
// the per-method authorization is the same (ControllerService::Check). Streaming RPCs stay
// gRPC-only.
//
// One thread accepts; each connection is served by one worker thread, calls one after another.
// Workers are kept for the next connection (idle ones exit after 30 s): a command's call then
// costs no thread creation. Destruction stops accepting, shuts every open connection down, waits
// for the workers and removes the socket file.
//
// Over TCP (StartTcp: ControllerWirePort, rpc/wire_tcp.h; commands on login nodes) the same
// server reads a munge credential in every request and runs it as the decoded uid/gid (the
// context's origin is the credential's, its host the peer's address); a request whose credential
// munged refuses (invalid, expired, replayed) is answered UNAUTHENTICATED and its connection
// closed, as is a connection whose requests change uid (PERMISSION_DENIED). The per-uid limits
// below apply from a connection's first request, when its uid is known: a connection over them
// then gets the refusal frame instead of an answer (its request not run), and the command takes
// gRPC. Before that, a connection counts against `total` and the unprivileged share of it.
//
// Limits (LocalServerLimits), so that no local user can starve the controller or other users:
//  - a request frame is at most 64 MiB and its buffer grows only as its bytes arrive
//    (rpc/local_wire.h);
//  - an unprivileged uid holds at most `per_uid` connections at once, and all unprivileged uids
//    together at most `total - privileged_reserve`; root and the cluster user (`privileged`) are
//    never counted against those, only against `total`. A connection over a limit gets a refusal
//    frame ("too many connections from uid N ...") and is closed before anything is read; the
//    command then falls back to gRPC. Refusals are logged, at most one line per uid per 10 s;
//  - a connection with no new request for `idle_ms` is closed (quietly; the command reconnects),
//    one whose request frame has not fully arrived `frame_ms` after its first byte is closed and
//    logged, and a response the caller does not read within `write_ms` drops the connection.
#include <grpcpp/grpcpp.h>

#include <chrono>
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
#include "rpc/munge_codec.h"
#include "tessera/v1/controller.grpc.pb.h"

namespace tessera::ctld::rpc {

// The context a call on the local socket or the TCP wire runs under: identity from the kernel
// (local) or from the request's munge credential (TCP).
class LocalCallContext : public grpc::ServerContext {
 public:
  LocalCallContext(uint32_t uid, uint32_t gid, std::string host, std::string where = "local socket",
                   std::string origin = "")
      : uid_(uid), gid_(gid), host_(std::move(host)), where_(std::move(where)),
        origin_(std::move(origin)) {}
  uint32_t uid() const { return uid_; }
  uint32_t gid() const { return gid_; }
  // The submitting host: this host's name (local), the peer's address (TCP).
  const std::string& host() const { return host_; }
  // For logs: "local socket", or "wire ipv4:10.0.0.5:40022".
  const std::string& where() const { return where_; }
  // The credential's origin address (TCP; "" on the local socket), as Identity::origin.
  const std::string& origin() const { return origin_; }

 private:
  uint32_t uid_, gid_;
  std::string host_, where_, origin_;
};

struct LocalServerLimits {
  int per_uid = 8;                        // connections one unprivileged uid may hold at once
  int total = 256;                        // connections at once, everyone together
  int privileged_reserve = 32;            // of `total`, kept for the privileged uids
  std::set<uint32_t> privileged = {0};    // root and the cluster user (SlurmUser)
  int idle_ms = 10000;                    // between requests
  int frame_ms = 5000;                    // from a request's first byte to its last
  int write_ms = 10000;                   // to hand a response to the socket
};

class LocalServer {
 public:
  // Listens on `path`: creates its directory (0755), refuses when another process answers
  // there, replaces a stale socket file, makes the socket 0666 (the kernel says who connects).
  static Result<std::unique_ptr<LocalServer>> Start(const std::string& path,
                                                    v1::Controller::Service* service,
                                                    LocalServerLimits limits = {});
  // Listens on TCP address:port ("" = every IPv4 address; port 0 = a free one, see Port());
  // `codec` decodes the requests' credentials and must outlive the server.
  static Result<std::unique_ptr<LocalServer>> StartTcp(const std::string& address, uint16_t port,
                                                       v1::Controller::Service* service,
                                                       const tessera::rpc::CredentialCodec* codec,
                                                       LocalServerLimits limits = {});
  // The TCP port listened on (0 for the Unix socket).
  uint16_t Port() const { return port_; }
  ~LocalServer();
  LocalServer(const LocalServer&) = delete;
  // Worker threads waiting for a connection (diagnostics, tests).
  int IdleWorkers();
  // Connections open now (diagnostics, tests).
  int OpenConnections();
  LocalServer& operator=(const LocalServer&) = delete;

 private:
  static constexpr uint32_t kUnknownUid = ~0u;  // a TCP connection before its first request
  struct Conn {
    int fd;
    uint32_t uid, gid;   // kUnknownUid over TCP until the first request's credential
    std::string peer;    // TCP: "ipv4:ADDR:PORT"
    std::string address; // TCP: ADDR
  };
  using Handler = std::function<grpc::Status(grpc::ServerContext*, std::string_view, std::string*)>;
  LocalServer(std::string path, int listen_fd, v1::Controller::Service* service,
              LocalServerLimits limits, const tessera::rpc::CredentialCodec* codec = nullptr,
              uint16_t port = 0);
  template <typename Req, typename Resp>
  void Add(const char* name, grpc::Status (v1::Controller::Service::*method)(grpc::ServerContext*,
                                                                             const Req*, Resp*));
  void AcceptLoop();
  // Under mu_: why a connection of `uid` may not be served now (OK when it may); kUnknownUid
  // checks the total and the unprivileged share only. `counted`: the connection is already
  // in open_ (a TCP connection learning its uid).
  Status Admit(uint32_t uid, bool counted = false);
  // Under mu_: books `fd` (in open_) under `uid`.
  void Book(int fd, uint32_t uid);
  // Under mu_: logs a refusal, at most one line per uid per 10 s (counting the ones left out).
  void LogRefusal(uint32_t uid, const Status& why);
  // A worker: serves `fd`, then waits for the next accepted connection.
  void Work(Conn c);
  void Serve(Conn c);
  // One request payload -> one response frame.
  Status Answer(int fd, const std::string& payload, uint32_t uid, uint32_t gid);
  // TCP: decodes the request's credential, binds the connection to its uid (admitting it then),
  // and answers. An error closes the connection; `*logged` when it was logged already.
  Status AnswerTcp(Conn* c, const std::string& payload, bool* logged);
  // Runs `method` under `ctx` and writes its response frame.
  Status Run(int fd, std::string_view method, std::string_view body, LocalCallContext* ctx);
  // "local socket" or "wire port N", for messages.
  std::string Name() const;
  // The connection's caller for the log: "uid N", and over TCP its peer.
  std::string Who(const Conn& c) const;

  std::string path_;
  std::string host_;
  int listen_fd_;
  const tessera::rpc::CredentialCodec* codec_;  // set: TCP
  uint16_t port_;
  v1::Controller::Service* service_;
  std::map<std::string, Handler, std::less<>> handlers_;
  std::mutex mu_;
  std::condition_variable idle_;  // a connection or a worker ended
  std::condition_variable work_;  // ready_ has a connection, or stopping_
  struct RefusalLog {
    std::chrono::steady_clock::time_point last;
    uint64_t left_out = 0;
  };
  LocalServerLimits limits_;
  std::map<int, uint32_t> open_;       // accepted connections, not yet closed -> uid (or kUnknownUid)
  std::map<uint32_t, int> per_uid_;    // open connections per uid
  int unprivileged_open_ = 0;
  std::map<uint32_t, RefusalLog> refusals_;
  std::deque<Conn> ready_;             // accepted, waiting for an idle worker
  int workers_ = 0;               // live worker threads
  int idle_workers_ = 0;          // of which waiting in work_
  bool stopping_ = false;
  std::thread acceptor_;
};

}  // namespace tessera::ctld::rpc
