#pragma once
// tcontrol (scontrol) hostlist helpers, answered without the controller (issue 19):
//   show hostnames [LIST]       one host name per line; LIST defaults to $SLURM_JOB_NODELIST
//                               (also `hostname`, any prefix of hostnames from `hostn`)
//   show hostlist LIST          the ranged expression, order and duplicates kept
//   show hostlistsorted LIST    the same, sorted (not made unique)
// LIST is a hostlist expression, several words (joined by ','), an absolute path of a file of
// names (white space or commas between them) or "-" (the names from stdin), as scontrol.
#include <string>
#include <vector>

#include "cli/lib/command.h"

namespace tessera::cli {

// -1 when `words` is not one of these commands; else the exit status.
int RunHostlistCommand(CommandContext& ctx, const std::vector<std::string>& words);

// Slurm's hostlist sort: by prefix, then by number (zero padding counted as its value).
std::vector<std::string> SortHostnames(std::vector<std::string> hosts);

}  // namespace tessera::cli
