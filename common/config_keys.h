#pragma once
// Every configuration key Tessera reads, in one table: which file and line kind it belongs to,
// its spellings, who reads it and what it does. The table is the code's list of known keys:
// tessera.conf's global keys that are not in it are "unknown key" warnings (cluster_config.cc),
// and the admin guide's key table is generated from it (`tessera-config-keys --markdown`,
// checked by the `config_keys_doc` test). A new key goes here first.
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct ConfigKey {
  const char* file;     // "tessera.conf", "gres.conf", "topology.conf"
  const char* line;     // "" = a global line; else the line kind: "NodeName", "PartitionName",
                        // "QOSName", "AccountName", "UserName", "SwitchName", "BlockName", "Name"
  const char* names;    // spellings, "|"-separated, the first the documented one
  const char* readers;  // who acts on it: "ctld", "noded", "commands", "scheduler"
                        // (ctld's), or "ignored" (a Slurm key accepted with a warning)
  const char* example;  // a valid value (the unit test loads every one)
  const char* meaning;
};

const std::vector<ConfigKey>& ConfigKeys();
// The entry of `key` (any case, any of its spellings) on a line of kind `line` ("" = global) in
// `file`; nullptr when the code does not know it.
const ConfigKey* FindConfigKey(std::string_view file, std::string_view line, std::string_view key);
// The admin guide's table (Markdown), in the table's order.
std::string ConfigKeysMarkdown();

}  // namespace tessera
