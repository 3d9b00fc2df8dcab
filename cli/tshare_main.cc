// tshare: thin entry point; the command lives in cli/lib (tshare_cmd.cc).
#include "cli/lib/command.h"

int main(int argc, char** argv) {
  return tessera::cli::RunMain(argc, argv, tessera::cli::RunTshare);
}
