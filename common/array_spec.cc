#include "common/array_spec.h"

#include <algorithm>

#include "common/duration.h"

namespace tessera {
namespace {

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    size_t c = s.find(',', pos);
    out.push_back(s.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
    if (c == std::string::npos) return out;
    pos = c + 1;
  }
}

Result<uint32_t> Index(const std::string& s) {
  auto n = ParseUint(s, "index");
  if (!n.ok() || *n > kMaxArrayIndex)
    return InvalidArgument("bad index \"" + s + "\" (0-" + std::to_string(kMaxArrayIndex) + ")");
  return static_cast<uint32_t>(*n);
}

}  // namespace

Result<ArraySpec> ParseArraySpec(const std::string& value) {
  ArraySpec out;
  std::string v = value;
  size_t pct = v.find('%');
  if (pct != std::string::npos) {
    auto lim = ParseUint(v.substr(pct + 1), "limit");
    if (!lim.ok() || *lim == 0 || *lim > kMaxArrayIndex)
      return InvalidArgument("bad %limit (expected a positive integer)");
    out.max_running = static_cast<uint32_t>(*lim);
    v = v.substr(0, pct);
  }
  if (v.empty()) return InvalidArgument("expected indices such as 0-15, 1,3,5-7 or 0-20:2");
  uint64_t total = 0;
  for (const std::string& item : SplitComma(v)) {
    std::string range = item;
    uint32_t step = 1;
    if (size_t colon = range.find(':'); colon != std::string::npos) {
      auto s = ParseUint(range.substr(colon + 1), "step");
      if (!s.ok() || *s == 0 || *s > kMaxArrayIndex) return InvalidArgument("bad step in \"" + item + "\"");
      step = static_cast<uint32_t>(*s);
      range = range.substr(0, colon);
    }
    size_t dash = range.find('-');
    auto lo = Index(range.substr(0, dash));
    if (!lo.ok()) return lo.status();
    uint32_t hi = *lo;
    if (dash != std::string::npos) {
      auto h = Index(range.substr(dash + 1));
      if (!h.ok()) return h.status();
      if (*h < *lo) return InvalidArgument("descending range \"" + item + "\"");
      hi = *h;
    }
    total += (hi - *lo) / step + 1;
    if (total > kMaxArrayIndex) return InvalidArgument("too many indices");
    for (uint64_t i = *lo; i <= hi; i += step) out.indices.push_back(static_cast<uint32_t>(i));
  }
  std::sort(out.indices.begin(), out.indices.end());
  out.indices.erase(std::unique(out.indices.begin(), out.indices.end()), out.indices.end());
  return out;
}

std::string FormatArrayIndices(const std::vector<uint32_t>& indices, uint32_t max_running) {
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(indices[i]);
    if (j > i) out += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  if (max_running) out += "%" + std::to_string(max_running);
  return out;
}

}  // namespace tessera
