// tessera-config-keys: the admin guide's table of configuration keys, from the code's table
// (config_keys.h). Not installed; build/tools/tessera-config-keys.
//   tessera-config-keys                 print the Markdown table
//   tessera-config-keys --update FILE   replace the table between FILE's
//                                       <!-- config-keys:begin --> and <!-- config-keys:end -->
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "common/config_keys.h"

int main(int argc, char** argv) {
  std::string table = tessera::ConfigKeysMarkdown();
  if (argc == 1) {
    std::fputs(table.c_str(), stdout);
    return 0;
  }
  if (argc != 3 || std::string(argv[1]) != "--update") {
    std::fputs("usage: tessera-config-keys [--update FILE]\n", stderr);
    return 2;
  }
  std::ifstream in(argv[2]);
  if (!in) return std::fprintf(stderr, "tessera-config-keys: cannot read %s\n", argv[2]), 1;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::string begin = "<!-- config-keys:begin -->\n", end = "<!-- config-keys:end -->";
  size_t b = text.find(begin), e = text.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b)
    return std::fprintf(stderr, "tessera-config-keys: %s has no %s ... %s markers\n", argv[2],
                        "<!-- config-keys:begin -->", "<!-- config-keys:end -->"), 1;
  text = text.substr(0, b + begin.size()) + table + text.substr(e);
  std::ofstream out(argv[2]);
  out << text;
  return out ? 0 : 1;
}
