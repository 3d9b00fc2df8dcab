#pragma once
// noded's own gRPC server on the node's configured port (NodeConfig.port, all addresses).
// It serves the standard gRPC health service (grpc.health.v1.Health, overall status SERVING) and
// the StepAgent service (step_service.h) when one is given. TLS when the config names
// certificates.
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include <memory>

#include "common/cluster_config.h"
#include "common/status.h"

namespace tessera::noded {

// The running server. Unknown methods answer UNIMPLEMENTED (without a StepAgent service, a
// callback generic service gives gRPC the polled completion queue it requires).
struct NodeServer {
  std::unique_ptr<grpc::CallbackGenericService> fallback;
  std::unique_ptr<grpc::Server> server;
};

// `port` 0 picks a free port; the bound port is stored in *bound_port. `service` (may be null,
// not owned, must outlive the server) is registered too.
Result<NodeServer> StartNodeServer(const ClusterConfig& cfg, uint16_t port, int* bound_port,
                                   grpc::Service* service = nullptr);

}  // namespace tessera::noded
