// trun: thin entry point; the command lives in cli/lib (trun_cmd.cc, trun_os.cc).
#include "cli/lib/command.h"

int main(int argc, char** argv) {
  return tessera::cli::RunMain(argc, argv, tessera::cli::RunTrun);
}
