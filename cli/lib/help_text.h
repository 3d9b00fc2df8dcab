#pragma once
// --help under the name a command was run as (issue 21).
#include <string>

#include "cli/lib/command.h"

namespace tessera::cli {

// A command's --help text as printed under the name it was run as: when ctx.prog is the Slurm
// name of the command (the word after "Usage: " on the first line, with 's' for its leading
// 't'), that word becomes ctx.prog wherever it stands as a word, so `sbatch --help` says
// sbatch. Otherwise (the t-name, any other name, no "Usage: " line) the text is unchanged.
std::string HelpText(const CommandContext& ctx, const std::string& text);

}  // namespace tessera::cli
