#include "common/filename_pattern.h"

#include <cctype>

namespace tessera {

std::string ExpandFilenamePattern(const std::string& pattern, const FilenameVars& v,
                                  const std::string& workdir) {
  std::string pat = pattern;
  if (pat.empty()) pat = v.array_index >= 0 ? "slurm-%A_%a.out" : "slurm-%j.out";
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
    auto num = [&](uint64_t n) {
      std::string s = std::to_string(n);
      if (s.size() < width) s.insert(0, width - s.size(), '0');
      return s;
    };
    switch (pat[j]) {
      case 'j': out += num(v.job_id); break;
      case 'x': out += v.job_name; break;
      case 'u': out += v.user; break;
      case 'A': out += num(v.array_job_id ? v.array_job_id : v.job_id); break;
      case 'a': out += v.array_index >= 0 ? num(static_cast<uint64_t>(v.array_index)) : num(4294967294u); break;
      case 'N': out += v.node; break;
      case '%': out += '%'; break;
      default: out += pat.substr(i, j - i + 1); break;
    }
    i = j;
  }
  if (!out.empty() && out[0] != '/' && !workdir.empty()) out = workdir + "/" + out;
  return out;
}

std::string ExpandArrayCodes(const std::string& pattern, uint64_t array_job_id, uint32_t task_id) {
  std::string pat = pattern.empty() ? "slurm-%A_%a.out" : pattern;
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
    if (j < pat.size() && (pat[j] == 'A' || pat[j] == 'a')) {
      std::string s = std::to_string(pat[j] == 'A' ? array_job_id : task_id);
      if (s.size() < width) s.insert(0, width - s.size(), '0');
      out += s;
    } else {
      out += pat.substr(i, j - i + 1);  // "%%", "%j", ... stay for the node
    }
    i = j;
  }
  return out;
}

}  // namespace tessera
