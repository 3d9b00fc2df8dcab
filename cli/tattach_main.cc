// tattach (sattach, issue 19): thin entry point; the command lives in cli/lib (tstat_cmd.cc).
#include "cli/lib/command.h"
#include "cli/lib/tstat.h"

int main(int argc, char** argv) {
  return tessera::cli::RunMain(argc, argv, tessera::cli::RunTattach);
}
