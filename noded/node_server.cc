#include "noded/node_server.h"

#include <grpcpp/health_check_service_interface.h>

#include "rpc/grpc_util.h"

namespace tessera::noded {

Result<NodeServer> StartNodeServer(const ClusterConfig& cfg, uint16_t port, int* bound_port,
                                   grpc::Service* service) {
  auto creds = rpc::MakeServerCredentials(cfg);
  if (!creds.ok()) return creds.status();
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  std::string addr = "0.0.0.0:" + std::to_string(port);
  builder.AddListeningPort(addr, *creds, bound_port);
  if (service) builder.RegisterService(service);
  NodeServer ns;
  if (!service) {  // some service must exist for the server to poll; unknown -> UNIMPLEMENTED
    ns.fallback = std::make_unique<grpc::CallbackGenericService>();
    builder.RegisterCallbackGenericService(ns.fallback.get());
  }
  ns.server = builder.BuildAndStart();
  if (!ns.server || *bound_port == 0)
    return Unavailable("cannot listen on " + addr + " (port in use, or not permitted?)");
  ns.server->GetHealthCheckService()->SetServingStatus(true);
  return ns;
}

}  // namespace tessera::noded
