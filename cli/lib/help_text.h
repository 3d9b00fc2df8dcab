#pragma once
// --help under the name a command was run as (issue 21).
#include <string>

#include "cli/lib/command.h"

namespace tessera::cli {

// A command's --help text as printed under the name it was run as: the command's own name (the
// word after "Usage: " on the first line) becomes ctx.prog wherever it stands as a word, so
// `sbatch --help` says sbatch. Text without a "Usage: " line is returned unchanged.
std::string HelpText(const CommandContext& ctx, const std::string& text);

}  // namespace tessera::cli
