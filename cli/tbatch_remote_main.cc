// tbatch-remote: tbatch with the gRPC client, which `tbatch` execs when this host has no local
// controller socket (cli/lib/command.h, RunLocalMain).
#include "cli/lib/command.h"

int main(int argc, char** argv) {
  return tessera::cli::RunMain(argc, argv, tessera::cli::RunTbatch);
}
