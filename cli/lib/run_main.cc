// RunMain (command.h): the local socket, else the TCP wire when configured, else (or when ctld
// refuses either) gRPC + munge. The only
// place the commands construct the gRPC client (command.cc and the interface in
// controller_api.h have no gRPC).
#include "cli/lib/command.h"
#include "cli/lib/grpc_controller_api.h"
#include "cli/lib/id_names.h"

namespace tessera::cli {

int RunMain(int argc, char** argv, int (*run)(CommandContext&)) {
  SystemIdNames names;
  CommandContext ctx;
  InitMainContext(argc, argv, &names, &ctx);
  ctx.connect = []() -> Result<std::unique_ptr<ControllerApi>> {
    uint16_t wire_port = 0;
    auto cfg = LoadCommandConfig(&wire_port);
    if (!cfg.ok()) return cfg.status();
    auto grpc = [cfg = *cfg]() -> Result<std::unique_ptr<ControllerApi>> {
      return std::unique_ptr<ControllerApi>(std::make_unique<GrpcControllerApi>(
          cfg, std::make_unique<rpc::MungeCodec>(cfg.munge_socket), std::chrono::seconds(30)));
    };
    auto local = ConnectLocal(*cfg, grpc);  // refused on the socket: gRPC after all
    if (local.ok()) return local;
    auto wire = ConnectWire(*cfg, wire_port, grpc);  // a login node (issue 20 §1)
    if (wire.ok()) return wire;
    return grpc();
  };
  ExitMain(run(ctx));
}

}  // namespace tessera::cli
