#pragma once
// Batch scripts: reading #SBATCH / #TESSERA directives the way sbatch does, sanity checks on the
// script text, and the script --wrap generates.
//
// Directive rules (sbatch's): lines are read from the top; a line that starts exactly with
// "#SBATCH" or "#TESSERA" followed by white space (or the end of the line) is a directive; other
// comment lines ("#!/bin/bash", "##SBATCH", "# text") and blank lines are skipped; the first
// other line ends the directives. A directive's words are split like a shell would (quotes
// group, an unquoted '#' starts a comment). #TESSERA lines take exactly the same options; the
// prefix is reserved for Tessera-only options so that Slurm never sees them.
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::cli {

struct Directive {
  int line = 0;                     // 1-based line number in the script
  std::vector<std::string> words;   // e.g. {"--time", "60"} or {"-N2"}
  bool tessera = false;             // a #TESSERA line (may carry Tessera-only options)
};

// Errors: "script line 3: unterminated \" quote".
Result<std::vector<Directive>> ExtractDirectives(std::string_view script);

// Refuses what sbatch refuses: an empty script, a first line without "#!", DOS line breaks,
// NUL bytes, and scripts over kMaxScriptBytes.
Status CheckBatchScript(std::string_view script);
inline constexpr size_t kMaxScriptBytes = 4 * 1024 * 1024;

// The script sbatch --wrap builds around a command line.
std::string WrapScript(const std::string& command);

}  // namespace tessera::cli
