#include "cli/lib/help_text.h"

#include <cctype>

namespace tessera::cli {

std::string HelpText(const CommandContext& ctx, const std::string& text) {
  static constexpr char kUsagePrefix[] = "Usage: ";
  if (text.rfind(kUsagePrefix, 0) != 0) return text;
  size_t start = sizeof kUsagePrefix - 1;
  std::string own = text.substr(start, text.find_first_of(" \n", start) - start);
  // The Slurm name of every command is its own with 's' for the leading 't' (tbatch: sbatch).
  if (own.size() < 2 || ctx.prog != "s" + own.substr(1)) return text;
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; };
  std::string out;
  for (size_t i = 0; i < text.size();) {
    bool at_word = text.compare(i, own.size(), own) == 0 && (i == 0 || !word_char(text[i - 1])) &&
                   (i + own.size() == text.size() || !word_char(text[i + own.size()]));
    if (at_word) {
      out += ctx.prog;
      i += own.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

}  // namespace tessera::cli
