#include "cli/lib/local_controller_api.h"

#include <unistd.h>

#include "rpc/local_wire.h"

namespace tessera::cli {

Result<std::unique_ptr<LocalControllerApi>> LocalControllerApi::Connect(
    const std::string& path, std::chrono::seconds deadline) {
  auto fd = rpc::local::Connect(path, static_cast<int>(deadline.count() * 1000));
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<LocalControllerApi>(new LocalControllerApi(path, *fd));
}

LocalControllerApi::~LocalControllerApi() { close(fd_); }

template <typename Resp>
Result<Resp> LocalControllerApi::Call(const char* method, const google::protobuf::Message& req) {
  std::string bytes;
  req.SerializeToString(&bytes);
  auto body = rpc::local::Call(fd_, method, bytes);
  if (!body.ok()) {
    Code c = body.status().code();
    if (c == Code::kUnavailable || c == Code::kDataLoss || c == Code::kDeadlineExceeded)
      return Status(c, "tessera-ctld at " + path_ + ": " + body.status().message());
    return body.status();
  }
  Resp resp;
  if (!resp.ParseFromString(*body))
    return Status(Code::kDataLoss, std::string("malformed ") + method + " answer from " + path_);
  return resp;
}

#define TESSERA_LOCAL_RPC(Name, Req, Resp)                              \
  Result<pb::Resp> LocalControllerApi::Name(const pb::Req& req) {       \
    return Call<pb::Resp>(#Name, req);                                  \
  }

TESSERA_CONTROLLER_UNARY_RPCS(TESSERA_LOCAL_RPC)

#undef TESSERA_LOCAL_RPC

}  // namespace tessera::cli
