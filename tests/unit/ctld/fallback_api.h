#pragma once
// Shared by the local socket and TCP wire tests: a ControllerApi standing for a command's gRPC
// client in production, counting the calls that fell back to it.
#include <string>

#include "cli/lib/controller_api.h"

namespace tessera::testing {

class FallbackApi final : public tessera::cli::ControllerApi {
 public:
  explicit FallbackApi(int* calls) : calls_(calls) {}
  std::string Target() const override { return "fallback"; }
#define TESSERA_FAKE_RPC(Name, Req, Resp)                                                   \
  tessera::Result<tessera::cli::pb::Resp> Name(const tessera::cli::pb::Req&) override { \
    ++*calls_;                                                                              \
    return tessera::cli::pb::Resp();                                                        \
  }
  TESSERA_CONTROLLER_UNARY_RPCS(TESSERA_FAKE_RPC)
#undef TESSERA_FAKE_RPC
 private:
  int* calls_;
};

}  // namespace tessera::testing
