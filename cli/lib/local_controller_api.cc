#include "cli/lib/local_controller_api.h"

#include <unistd.h>

#include "rpc/local_wire.h"
#include "rpc/submit_split.h"
#include "rpc/wire_tcp.h"

namespace tessera::cli {

Result<std::unique_ptr<LocalControllerApi>> LocalControllerApi::Connect(
    const std::string& path, std::chrono::seconds deadline, Fallback fallback) {
  int ms = static_cast<int>(deadline.count() * 1000);
  Dial dial = [path, ms] { return rpc::local::Connect(path, ms); };
  auto fd = dial();
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<LocalControllerApi>(
      new LocalControllerApi(path, std::move(dial), *fd, deadline, std::move(fallback)));
}

Result<std::unique_ptr<LocalControllerApi>> LocalControllerApi::ConnectTcp(
    const std::string& host, uint16_t port, std::unique_ptr<rpc::CredentialCodec> codec,
    std::chrono::seconds deadline, Fallback fallback) {
  int ms = static_cast<int>(deadline.count() * 1000);
  Dial dial = [host, port, ms] { return rpc::wire::ConnectTcp(host, port, kWireConnectMs, ms); };
  auto fd = dial();
  if (!fd.ok()) return fd.status();
  std::string target = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                       std::to_string(port);
  return std::unique_ptr<LocalControllerApi>(new LocalControllerApi(
      target, std::move(dial), *fd, deadline, std::move(fallback), std::move(codec)));
}

LocalControllerApi::~LocalControllerApi() {
  if (fd_ >= 0) close(fd_);
}

Status LocalControllerApi::Reconnect() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  used_ = false;
  auto fd = dial_();
  if (!fd.ok()) return fd.status();
  fd_ = *fd;
  return Status::Ok();
}

bool LocalControllerApi::UseFallback() {
  if (!fallback_) return false;
  auto remote = fallback_();
  if (!remote.ok()) return false;
  remote_ = std::move(*remote);
  return true;
}

template <typename Resp>
Result<Resp> LocalControllerApi::Call(const char* method, const google::protobuf::Message& req,
                                      bool* not_run) {
  *not_run = false;
  std::string bytes;
  req.SerializeToString(&bytes);
  std::string credential;  // TCP: a fresh one per request (munged refuses a replayed one)
  auto encode = [&]() -> Status {
    if (!codec_) return Status::Ok();
    auto c = codec_->Encode("");
    if (!c.ok()) return c.status();  // gRPC would need one too: no fallback
    credential = std::move(*c);
    return Status::Ok();
  };
  TESSERA_RETURN_IF_ERROR(encode());
  const std::string* cred = codec_ ? &credential : nullptr;
  // A used connection ctld closed while we were idle is reopened, before or after the write.
  if (fd_ < 0 || (used_ && rpc::local::PeerClosed(fd_))) {
    Status s = Reconnect();
    if (!s.ok()) {
      *not_run = true;  // nothing was sent: the fallback may take it
      return Status(s.code(), "tessera-ctld at " + path_ + ": " + s.message());
    }
  }
  bool was_used = used_;
  auto body = rpc::local::Call(fd_, method, bytes, not_run, cred);
  if (!body.ok() && *not_run && was_used && Reconnect().ok() && encode().ok())
    body = rpc::local::Call(fd_, method, bytes, not_run, cred);
  used_ = true;
  if (!body.ok()) {
    Code c = body.status().code();
    if (*not_run || c == Code::kUnavailable || c == Code::kDataLoss || c == Code::kDeadlineExceeded)
      return Status(c, "tessera-ctld at " + path_ + ": " + body.status().message());
    return body.status();
  }
  Resp resp;
  if (!resp.ParseFromString(*body))
    return Status(Code::kDataLoss, std::string("malformed ") + method + " answer from " + path_);
  return resp;
}

template <typename Resp, typename Req>
Result<Resp> LocalControllerApi::Invoke(const char* method, const Req& req,
                                        Result<Resp> (ControllerApi::*remote)(const Req&)) {
  if (remote_) return (remote_.get()->*remote)(req);
  bool not_run = false;
  auto r = Call<Resp>(method, req, &not_run);
  if (r.ok() || !not_run || !UseFallback()) return r;
  return (remote_.get()->*remote)(req);  // refused: this call and all later ones
}

// A bulk SubmitJobs over one frame's bound is sent in parts (rpc/submit_split.h).
#define TESSERA_LOCAL_RPC(Name, Req, Resp)                                              \
  Result<pb::Resp> LocalControllerApi::Name(const pb::Req& req) {                        \
    return rpc::CallInParts<pb::Resp>(req, [this](const pb::Req& part) {                \
      return Invoke<pb::Resp, pb::Req>(#Name, part, &ControllerApi::Name);              \
    });                                                                                  \
  }

TESSERA_CONTROLLER_UNARY_RPCS(TESSERA_LOCAL_RPC)

#undef TESSERA_LOCAL_RPC

}  // namespace tessera::cli
