#pragma once
// GrpcControllerApi: the controller's API over gRPC, as remote commands use it (a fresh munge
// credential and a deadline on every call, errors converted with rpc::FromGrpc).
#include <chrono>
#include <memory>
#include <string>

#include "cli/lib/controller_api.h"
#include "common/cluster_config.h"
#include "rpc/munge_codec.h"
#include "tessera/v1/controller.grpc.pb.h"

namespace tessera::cli {

class GrpcControllerApi final : public ControllerApi {
 public:
  GrpcControllerApi(const ClusterConfig& cfg, std::unique_ptr<rpc::CredentialCodec> codec,
                    std::chrono::seconds deadline);
  std::string Target() const override { return target_; }
  TESSERA_CONTROLLER_UNARY_RPCS(TESSERA_CONTROLLER_API_OVERRIDE)

 private:
  template <typename Req, typename Resp, typename Method>
  Result<Resp> Call(Method method, const Req& req);

  std::string target_;
  std::unique_ptr<rpc::CredentialCodec> codec_;
  std::chrono::seconds deadline_;
  std::unique_ptr<pb::Controller::Stub> stub_;
};

}  // namespace tessera::cli
