#pragma once
// LocalControllerApi: the controller's API over its Unix socket (rpc/local_wire.h), for commands
// run on the controller's host. Same methods and messages as GrpcControllerApi; the kernel tells
// ctld who is calling, so no munge credential is made. One connection for the command's life.
#include <chrono>
#include <memory>
#include <string>

#include "cli/lib/controller_api.h"

namespace tessera::cli {

class LocalControllerApi final : public ControllerApi {
 public:
  // kUnavailable when nothing answers at `path` (the caller then uses gRPC).
  static Result<std::unique_ptr<LocalControllerApi>> Connect(const std::string& path,
                                                             std::chrono::seconds deadline);
  ~LocalControllerApi() override;
  std::string Target() const override { return path_; }
  TESSERA_CONTROLLER_UNARY_RPCS(TESSERA_CONTROLLER_API_OVERRIDE)

 private:
  LocalControllerApi(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  template <typename Resp>
  Result<Resp> Call(const char* method, const google::protobuf::Message& req);

  std::string path_;
  int fd_;
};

}  // namespace tessera::cli
