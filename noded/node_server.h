#pragma once
// noded's own gRPC server on the node's configured port (NodeConfig.port, all addresses).
// Today it serves only the standard gRPC health service (grpc.health.v1.Health, overall status
// SERVING); later issues add the step I/O service. TLS when the config names certificates.
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include <memory>

#include "common/cluster_config.h"
#include "common/status.h"

namespace tessera::noded {

// The running server. Unknown methods answer UNIMPLEMENTED (a callback generic service, which
// also gives gRPC the polled completion queue it requires while no other service exists).
struct NodeServer {
  std::unique_ptr<grpc::CallbackGenericService> fallback;
  std::unique_ptr<grpc::Server> server;
};

// `port` 0 picks a free port; the bound port is stored in *bound_port.
Result<NodeServer> StartNodeServer(const ClusterConfig& cfg, uint16_t port, int* bound_port);

}  // namespace tessera::noded
