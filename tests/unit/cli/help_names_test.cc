// issue 21: --help under the Slurm names says the Slurm name (HelpText, cli/lib/command.h).
#include <catch2/catch.hpp>
#include <sstream>

#include "cli/lib/command.h"
#include "cli/lib/help_text.h"

using tessera::cli::CommandContext;
using tessera::cli::HelpText;
using tessera::cli::RunTbatch;

namespace {
CommandContext Ctx(const std::string& prog) {
  CommandContext ctx;
  ctx.prog = prog;
  return ctx;
}
}  // namespace

TEST_CASE("HelpText names the program as it was run, whole words only") {
  std::string text = "Usage: tbatch [OPTIONS]\nSubmit with tbatch; see tbatch_x and xtbatch.\n";
  CHECK(HelpText(Ctx("tbatch"), text) == text);
  CHECK(HelpText(Ctx("sbatch"), text) ==
        "Usage: sbatch [OPTIONS]\nSubmit with sbatch; see tbatch_x and xtbatch.\n");
  CHECK(HelpText(Ctx("sbatch"), "no usage line\n") == "no usage line\n");
  CHECK(HelpText(Ctx("tcmd"), text) == text);  // not a Slurm name: unchanged
}

TEST_CASE("sbatch --help says sbatch and never tbatch") {
  for (const char* prog : {"sbatch", "tbatch"}) {
    std::ostringstream out, err;
    CommandContext ctx = Ctx(prog);
    ctx.args = {"--help"};
    ctx.out = &out;
    ctx.err = &err;
    REQUIRE(RunTbatch(ctx) == 0);
    CHECK(out.str().rfind(std::string("Usage: ") + prog + " ", 0) == 0);
    if (std::string(prog) == "sbatch") CHECK(out.str().find("tbatch") == std::string::npos);
  }
}
