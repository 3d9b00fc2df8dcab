#include "common/env_block.h"

namespace tessera {

std::string EnvBlockFromMap(const std::map<std::string, std::string>& env) {
  std::string b;
  for (const auto& [k, v] : env) EnvBlockSet(&b, k, v);
  return b;
}

Status ValidateEnvBlock(std::string_view block) {
  if (!block.empty() && block.back() != '\0')
    return InvalidArgument("environment block: the last entry is not ended by a NUL byte");
  size_t pos = 0;
  for (int n = 1; pos < block.size(); ++n) {
    size_t end = block.find('\0', pos);
    std::string_view e = block.substr(pos, end - pos);
    size_t eq = e.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return InvalidArgument("environment block: entry " + std::to_string(n) + " (\"" +
                             std::string(e.substr(0, 40)) + "\") is not NAME=VALUE");
    pos = end + 1;
  }
  return Status::Ok();
}

std::map<std::string, std::string> EnvBlockToMap(std::string_view block) {
  std::map<std::string, std::string> env;
  size_t pos = 0;
  while (pos < block.size()) {
    size_t end = block.find('\0', pos);
    if (end == std::string_view::npos) end = block.size();
    std::string_view e = block.substr(pos, end - pos);
    size_t eq = e.find('=');
    if (eq != std::string_view::npos && eq > 0)
      env.insert_or_assign(std::string(e.substr(0, eq)), std::string(e.substr(eq + 1)));
    pos = end + 1;
  }
  return env;
}

void EnvBlockSet(std::string* block, std::string_view key, std::string_view value) {
  block->append(key);
  block->push_back('=');
  block->append(value);
  block->push_back('\0');
}

}  // namespace tessera
