#pragma once
// Environment blocks: a job's environment as one string of KEY=VALUE entries, each ended by a
// NUL byte (the layout of /proc/PID/environ). A later entry of the same KEY wins.
//
// Why: a submission carries the submitter's whole environment (dozens of variables) that the
// controller never looks into until launch. As one string it is parsed, stored and copied as one
// allocation instead of a map of strings (bench/RESULTS.md: API submit before/after).
#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera {

std::string EnvBlockFromMap(const std::map<std::string, std::string>& env);
// kInvalidArgument naming the first bad entry (no '=', empty name, no final NUL).
Status ValidateEnvBlock(std::string_view block);
// The entries as a map (later entries win). Assumes a valid block; bad entries are skipped.
std::map<std::string, std::string> EnvBlockToMap(std::string_view block);
// Appends KEY=VALUE (overriding earlier entries of KEY).
void EnvBlockSet(std::string* block, std::string_view key, std::string_view value);

}  // namespace tessera
