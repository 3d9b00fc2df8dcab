#pragma once
// talloc (salloc, issue 19): see talloc_cmd.cc and trun_alloc.h.
#include "cli/lib/command.h"

namespace tessera::cli {

int RunTalloc(CommandContext& ctx);

}  // namespace tessera::cli
