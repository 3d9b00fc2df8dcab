#include "common/hostlist.h"

#include <cctype>
#include <algorithm>
#include <cstdint>
#include <tuple>

namespace tessera {
namespace {

// Splits at commas that are not inside brackets.
Result<std::vector<std::string>> SplitTopLevel(std::string_view expr) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  for (char c : expr) {
    if (c == '[') {
      if (++depth > 1) return InvalidArgument("nested '[' in hostlist \"" + std::string(expr) + "\"");
    } else if (c == ']') {
      if (--depth < 0) return InvalidArgument("unbalanced ']' in hostlist \"" + std::string(expr) + "\"");
    }
    if (c == ',' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      cur += c;
    }
  }
  if (depth != 0) return InvalidArgument("unbalanced '[' in hostlist \"" + std::string(expr) + "\"");
  parts.push_back(cur);
  return parts;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string Pad(uint64_t n, size_t width) {
  std::string s = std::to_string(n);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

// Expands the range list inside one bracket pair, e.g. "0,3-4,8" or "01-10".
Result<std::vector<std::string>> ExpandRanges(std::string_view body, std::string_view whole) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t comma = body.find(',', pos);
    if (comma == std::string_view::npos) comma = body.size();
    std::string_view item = body.substr(pos, comma - pos);
    size_t dash = item.find('-');
    std::string_view lo = item.substr(0, dash);
    std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
    if (!AllDigits(lo) || !AllDigits(hi) || lo.size() > 18 || hi.size() > 18) {
      return InvalidArgument("bad range \"" + std::string(item) + "\" in hostlist \"" +
                             std::string(whole) + "\"");
    }
    uint64_t a = std::stoull(std::string(lo)), b = std::stoull(std::string(hi));
    if (b < a) {
      return InvalidArgument("descending range \"" + std::string(item) + "\" in hostlist \"" +
                             std::string(whole) + "\"");
    }
    if (b - a >= kMaxHostlistSize) return InvalidArgument("hostlist range too large: " + std::string(item));
    size_t width = lo.size();
    for (uint64_t n = a; n <= b; ++n) out.push_back(Pad(n, width));
    pos = comma + 1;
  }
  return out;
}

Status ExpandOne(const std::string& name, std::string_view whole, std::vector<std::string>* out) {
  size_t open = name.find('[');
  if (open == std::string::npos) {
    if (name.find(']') != std::string::npos) return InvalidArgument("unbalanced ']' in hostlist");
    out->push_back(name);
    return Status::Ok();
  }
  size_t close = name.find(']', open);
  auto nums = ExpandRanges(std::string_view(name).substr(open + 1, close - open - 1), whole);
  if (!nums.ok()) return nums.status();
  std::string prefix = name.substr(0, open);
  std::string rest = name.substr(close + 1);
  for (const auto& n : *nums) {
    TESSERA_RETURN_IF_ERROR(ExpandOne(prefix + n + rest, whole, out));
    if (out->size() > kMaxHostlistSize) return InvalidArgument("hostlist expands to too many names");
  }
  return Status::Ok();
}

// True when `n` written in `width` digits has leading zeros ("007"; "0" alone is not padded).
bool IsPadded(uint64_t n, size_t width) { return std::to_string(n).size() < width; }

struct Parsed {
  std::string prefix;
  bool numbered = false;
  uint64_t num = 0;
  size_t width = 0;
};

Parsed ParseName(const std::string& h) {
  Parsed p;
  size_t i = h.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(h[i - 1]))) --i;
  if (i == h.size() || h.size() - i > 18) {
    p.prefix = h;
    return p;
  }
  p.prefix = h.substr(0, i);
  p.numbered = true;
  p.width = h.size() - i;
  p.num = std::stoull(h.substr(i));
  return p;
}

}  // namespace

Result<std::vector<std::string>> ExpandHostlist(std::string_view expr) {
  std::vector<std::string> out;
  auto parts = SplitTopLevel(expr);
  if (!parts.ok()) return parts.status();
  for (const auto& part : *parts) {
    if (part.empty()) continue;
    TESSERA_RETURN_IF_ERROR(ExpandOne(part, expr, &out));
  }
  return out;
}

std::string CompressHostlist(const std::vector<std::string>& hosts) {
  struct Range {
    uint64_t lo, hi;
    size_t width;
  };
  struct Group {  // consecutive ranges with one prefix
    std::string prefix;
    bool numbered;
    std::vector<Range> ranges;
  };
  std::vector<Group> groups;
  for (const auto& h : hosts) {
    Parsed p = ParseName(h);
    if (!p.numbered) {
      groups.push_back({p.prefix, false, {}});
      continue;
    }
    if (!groups.empty() && groups.back().numbered && groups.back().prefix == p.prefix) {
      Range& last = groups.back().ranges.back();
      // As Slurm's _width_equiv: equal widths merge, and so do numbers written without leading
      // zeros ("n9","n10" -> "n[9-10]"; the range keeps the width of its low end).
      bool same_width = last.width == p.width ||
                        (!IsPadded(last.lo, last.width) && !IsPadded(p.num, p.width));
      if (same_width && p.num == last.hi + 1) {
        last.hi = p.num;
      } else {
        groups.back().ranges.push_back({p.num, p.num, p.width});
      }
      continue;
    }
    groups.push_back({p.prefix, true, {{p.num, p.num, p.width}}});
  }
  std::string out;
  for (const auto& g : groups) {
    if (!out.empty()) out += ',';
    out += g.prefix;
    if (!g.numbered) continue;
    bool single = g.ranges.size() == 1 && g.ranges[0].lo == g.ranges[0].hi;
    if (single) {
      out += Pad(g.ranges[0].lo, g.ranges[0].width);
      continue;
    }
    out += '[';
    for (size_t i = 0; i < g.ranges.size(); ++i) {
      const Range& r = g.ranges[i];
      if (i) out += ',';
      out += Pad(r.lo, r.width);
      if (r.hi != r.lo) out += "-" + Pad(r.hi, r.width);
    }
    out += ']';
  }
  return out;
}

namespace {

std::tuple<std::string_view, unsigned long long, size_t, std::string_view> HostKey(
    const std::string& s) {
  size_t i = s.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1]))) --i;
  std::string_view digits = std::string_view(s).substr(i);
  unsigned long long num = 0;
  if (digits.size() <= 18)
    for (char c : digits) num = num * 10 + static_cast<unsigned long long>(c - '0');
  return {std::string_view(s).substr(0, i), num, digits.size(), s};
}

}  // namespace

bool HostNameLess(const std::string& a, const std::string& b) { return HostKey(a) < HostKey(b); }

void SortHostNames(std::vector<std::string>& names) {
  std::stable_sort(names.begin(), names.end(), HostNameLess);
}

}  // namespace tessera
