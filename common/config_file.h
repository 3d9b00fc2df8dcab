#pragma once
// Lexer/parser for slurm.conf syntax, shared by tessera.conf, gres.conf and topology.conf.
//
//  - One record per line: whitespace-separated `Key=Value` pairs ("NodeName=n[1-4] CPUs=8").
//  - Keys are case-insensitive (stored lower-cased, original spelling kept for messages).
//  - `#` starts a comment (`\#` is a literal '#'); a trailing `\` continues the line.
//  - Values may be double-quoted to contain blanks.
//  - `Include <path>` (relative to the including file's directory) splices another file in;
//    include cycles and depth > 16 are errors.
//  - A NUL byte anywhere is an error naming file:line (C code would read the value cut short).
// Every error names "file:line: message".
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tessera {

struct ConfigPair {
  std::string key;       // lower-cased
  std::string raw_key;   // as written
  std::string value;
};

struct ConfigLine {
  std::string file;
  int line = 0;
  std::vector<ConfigPair> pairs;

  std::string Where() const { return file + ":" + std::to_string(line); }
  // First pair's key, e.g. "nodename" for a node line.
  const std::string& Head() const { return pairs.front().key; }
  // Value of `key` (lower-case) on this line, or nullptr.
  const std::string* Find(std::string_view key) const;
};

Result<std::vector<ConfigLine>> ParseConfigFile(const std::string& path);
Result<std::vector<ConfigLine>> ParseConfigText(std::string_view text, const std::string& filename);

std::string ToLower(std::string_view s);

// The comma-separated items of a config value ("a,b,,c" -> {"a", "b", "c"}): empty items are
// dropped; unique = true also drops repeats (the first stays).
std::vector<std::string> SplitList(std::string_view s, bool unique = false);

}  // namespace tessera
