#pragma once
// LocalControllerApi: the controller's API over its Unix socket (rpc/local_wire.h), for commands
// run on the controller's host. Same methods and messages as GrpcControllerApi; the kernel tells
// ctld who is calling, so no munge credential is made. One connection for the command's life,
// reopened when ctld closed it while the command was idle (ctld closes connections idle for
// 10 s, e.g. between the polls of `tqueue -i`).
//
// Fallback: when ctld refuses the connection (too many from this uid, the socket full: a refusal
// frame) or closes it before reading a request, the request was not run; the call, and every
// later one, then goes through the `fallback` API (the commands pass gRPC + munge), so a user
// whose connections fill the socket still gets answers. Without a fallback the refusal is the
// call's error. A bulk SubmitJobs larger than one frame is sent in parts (rpc/submit_split.h).
//
// ConnectTcp: the same over ctld's TCP wire (ControllerWirePort, rpc/wire_tcp.h) for commands on
// other hosts (login nodes): every request carries a fresh munge credential from `codec`. The
// commands use it when the config names the port (and no TLS); when nothing accepts there, they
// take gRPC (command.h), and a refusal goes to the fallback as above.
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "cli/lib/controller_api.h"
#include "rpc/munge_codec.h"

namespace tessera::cli {

class LocalControllerApi final : public ControllerApi {
 public:
  using Fallback = std::function<Result<std::unique_ptr<ControllerApi>>()>;
  // kUnavailable when nothing answers at `path` (the caller then uses gRPC).
  static Result<std::unique_ptr<LocalControllerApi>> Connect(const std::string& path,
                                                             std::chrono::seconds deadline,
                                                             Fallback fallback = nullptr);
  // kUnavailable when nothing accepts at host:port within kWireConnectMs.
  static Result<std::unique_ptr<LocalControllerApi>> ConnectTcp(
      const std::string& host, uint16_t port, std::unique_ptr<rpc::CredentialCodec> codec,
      std::chrono::seconds deadline, Fallback fallback = nullptr);
  static constexpr int kWireConnectMs = 2000;
  ~LocalControllerApi() override;
  std::string Target() const override { return remote_ ? remote_->Target() : path_; }
  TESSERA_CONTROLLER_UNARY_RPCS(TESSERA_CONTROLLER_API_OVERRIDE)

 private:
  using Dial = std::function<Result<int>()>;
  LocalControllerApi(std::string path, Dial dial, int fd, std::chrono::seconds deadline,
                     Fallback fallback, std::unique_ptr<rpc::CredentialCodec> codec = nullptr)
      : path_(std::move(path)), dial_(std::move(dial)), fd_(fd), deadline_(deadline),
        fallback_(std::move(fallback)), codec_(std::move(codec)) {}
  // One call on the socket. *not_run: the server did not run it (refused, or closed unread),
  // after a reconnect when the connection had been used before.
  template <typename Resp>
  Result<Resp> Call(const char* method, const google::protobuf::Message& req, bool* not_run);
  // The socket first; a call ctld did not run (refused) goes to the fallback's `remote`
  // method, as every later call does.
  template <typename Resp, typename Req>
  Result<Resp> Invoke(const char* method, const Req& req,
                      Result<Resp> (ControllerApi::*remote)(const Req&));
  // Opens a fresh connection in place of fd_.
  Status Reconnect();
  // After a call that was not run: makes remote_ from the fallback; false when there is none.
  bool UseFallback();

  std::string path_;  // the socket's path, or host:port (TCP)
  Dial dial_;         // opens a connection
  int fd_;
  std::chrono::seconds deadline_;
  Fallback fallback_;
  bool used_ = false;                       // fd_ has carried a call
  std::unique_ptr<ControllerApi> remote_;   // once set, every call goes there
  std::unique_ptr<rpc::CredentialCodec> codec_;  // TCP: a credential per request
};

}  // namespace tessera::cli
