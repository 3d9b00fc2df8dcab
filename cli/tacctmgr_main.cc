// tacctmgr (and sacctmgr, a symlink): thin entry point; the command lives in cli/lib
// (tacctmgr_cmd.cc).
#include "cli/lib/command.h"

int main(int argc, char** argv) {
  return tessera::cli::RunMain(argc, argv, tessera::cli::RunTacctmgr);
}
