#include "cli/lib/batch_script.h"

#include <cctype>

#include "cli/lib/text_util.h"

namespace tessera::cli {
namespace {

// Length of the directive prefix at the start of `line`, or 0 when it is not a directive.
size_t DirectivePrefix(std::string_view line) {
  for (std::string_view magic : {"#SBATCH", "#TESSERA"}) {
    if (!StartsWith(line, magic)) continue;
    if (line.size() == magic.size() ||
        std::isspace(static_cast<unsigned char>(line[magic.size()])))
      return magic.size();
  }
  return 0;
}

bool IsBlank(std::string_view line) {
  for (char c : line)
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

Result<std::vector<Directive>> ExtractDirectives(std::string_view script) {
  std::vector<Directive> out;
  int lineno = 0;
  size_t pos = 0;
  while (pos < script.size()) {
    size_t nl = script.find('\n', pos);
    std::string_view line =
        script.substr(pos, nl == std::string_view::npos ? script.npos : nl - pos);
    pos = nl == std::string_view::npos ? script.size() : nl + 1;
    ++lineno;
    size_t prefix = DirectivePrefix(line);
    if (prefix == 0) {
      std::string trimmed = Trim(line);
      if (trimmed.empty() || trimmed[0] == '#') continue;  // blank or comment
      break;  // first command line: no more directives
    }
    auto words = SplitDirectiveWords(line.substr(prefix));
    if (!words.ok())
      return InvalidArgument("script line " + std::to_string(lineno) + ": " +
                             words.status().message());
    if (!words->empty()) out.push_back({lineno, std::move(*words), prefix == 8});
  }
  return out;
}

Status CheckBatchScript(std::string_view script) {
  if (script.empty() || IsBlank(script)) return InvalidArgument("batch script is empty");
  if (script.size() > kMaxScriptBytes)
    return InvalidArgument("batch script is larger than " + std::to_string(kMaxScriptBytes) +
                           " bytes");
  if (!StartsWith(script, "#!"))
    return InvalidArgument(
        "this does not look like a batch script: the first line must start with #! followed "
        "by the path to an interpreter, for instance #!/bin/sh");
  if (script.find('\0') != std::string_view::npos)
    return InvalidArgument("batch script contains a NUL character");
  if (script.find("\r\n") != std::string_view::npos)
    return InvalidArgument("batch script contains DOS line breaks (\\r\\n) instead of UNIX "
                           "line breaks (\\n)");
  return Status::Ok();
}

std::string WrapScript(const std::string& command) {
  return "#!/bin/sh\n# This script was created by tbatch --wrap.\n\n" + command + "\n";
}

}  // namespace tessera::cli
