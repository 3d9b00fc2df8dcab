#include "common/filename_pattern.h"

#include <cctype>
#include <functional>
#include <optional>

namespace tessera {
namespace {

// Walks `pat`, replacing each "%[width]c" for which `code(c, width)` returns a value; other
// codes are copied as written.
std::string ExpandCodes(const std::string& pat,
                        const std::function<std::optional<std::string>(char, size_t)>& code) {
  std::string out;
  for (size_t i = 0; i < pat.size(); ++i) {
    if (pat[i] != '%' || i + 1 >= pat.size()) {
      out += pat[i];
      continue;
    }
    size_t j = i + 1;
    size_t width = 0;
    while (j < pat.size() && std::isdigit(static_cast<unsigned char>(pat[j])) && width < 10)
      width = width * 10 + static_cast<size_t>(pat[j++] - '0');
    if (j >= pat.size()) {
      out += pat.substr(i);
      break;
    }
    auto v = code(pat[j], width);
    out += v ? *v : pat.substr(i, j - i + 1);
    i = j;
  }
  return out;
}

std::string Padded(uint64_t n, size_t width) {
  std::string s = std::to_string(n);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

// Slurm's escape: a pattern with a backslash is used as written, without its backslashes.
bool Escaped(const std::string& pat, std::string* out) {
  if (pat.find('\\') == std::string::npos) return false;
  out->clear();
  for (char c : pat)
    if (c != '\\') *out += c;
  return true;
}

}  // namespace

std::string ExpandFilenamePattern(const std::string& pattern, const FilenameVars& v,
                                  const std::string& workdir) {
  std::string pat = pattern;
  if (pat.empty()) pat = v.array_index >= 0 ? "slurm-%A_%a.out" : "slurm-%j.out";
  uint64_t index = v.array_index >= 0 ? static_cast<uint64_t>(v.array_index) : 4294967294u;
  std::string out;
  if (!Escaped(pat, &out)) out = ExpandCodes(pat, [&](char c, size_t width) -> std::optional<std::string> {
    switch (c) {
      case 'j': return Padded(v.job_id, width);
      case 'J':
        return Padded(v.job_id, width) +
               (v.step_id >= 0 ? "." + std::to_string(v.step_id) : std::string());
      case 's': return v.step_id >= 0 ? Padded(static_cast<uint64_t>(v.step_id), width)
                                      : std::string("batch");
      case 'n': return Padded(v.node_id, width);
      case 't': return Padded(v.task_id, width);
      case 'r': return Padded(v.restart_count, width);
      case 'b': return Padded(index % 10, width);
      case 'x': return v.job_name;
      case 'u': return v.user;
      case 'A': return Padded(v.array_job_id ? v.array_job_id : v.job_id, width);
      case 'a': return Padded(index, width);
      case 'N': return v.node;
      case '%': return std::string("%");
      default: return std::nullopt;
    }
  });
  if (!out.empty() && out[0] != '/' && !workdir.empty()) out = workdir + "/" + out;
  return out;
}

std::string ExpandArrayCodes(const std::string& pattern, uint64_t array_job_id, uint32_t task_id) {
  if (pattern.find('\\') != std::string::npos) return pattern;  // escaped: the node copies it
  return ExpandCodes(pattern.empty() ? "slurm-%A_%a.out" : pattern,
                     [&](char c, size_t width) -> std::optional<std::string> {
                       if (c == 'A') return Padded(array_job_id, width);
                       if (c == 'a') return Padded(task_id, width);
                       if (c == 'b') return Padded(task_id % 10, width);
                       return std::nullopt;  // "%%", "%j", ... stay for the node
                     });
}

}  // namespace tessera
