// tbatch: thin entry point; the command lives in cli/lib (tbatch_cmd.cc). Built without gRPC:
// on a host without the controller's local socket it execs tbatch-remote.
#include "cli/lib/command.h"

int main(int argc, char** argv) {
  return tessera::cli::RunLocalMain(argc, argv, tessera::cli::RunTbatch, "tbatch-remote");
}
