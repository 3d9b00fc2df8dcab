// talloc (salloc): thin entry point; the command lives in cli/lib/talloc_cmd.cc.
#include "cli/lib/talloc.h"

int main(int argc, char** argv) {
  return tessera::cli::RunMain(argc, argv, tessera::cli::RunTalloc);
}
