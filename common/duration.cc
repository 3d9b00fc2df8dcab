#include "common/duration.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <cstdio>
#include <vector>

namespace tessera {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

Result<std::vector<int64_t>> SplitNumbers(std::string_view s, std::string_view whole) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (true) {
    size_t colon = s.find(':', pos);
    std::string_view f = s.substr(pos, colon == std::string_view::npos ? s.npos : colon - pos);
    auto n = ParseUint(f, "time field");
    if (!n.ok()) return InvalidArgument("invalid time limit \"" + std::string(whole) + "\"");
    out.push_back(static_cast<int64_t>(*n));
    if (colon == std::string_view::npos) break;
    pos = colon + 1;
  }
  if (out.size() > 3) return InvalidArgument("invalid time limit \"" + std::string(whole) + "\"");
  return out;
}

}  // namespace

Result<uint64_t> ParseUint(std::string_view s, std::string_view what) {
  if (s.empty() || s.size() > 18) return InvalidArgument("invalid " + std::string(what) + " \"" + std::string(s) + "\"");
  uint64_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return InvalidArgument("invalid " + std::string(what) + " \"" + std::string(s) + "\"");
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

Result<int64_t> ParseTimeLimit(std::string_view s) {
  if (EqualsIgnoreCase(s, "UNLIMITED") || EqualsIgnoreCase(s, "INFINITE") || s == "-1")
    return kUnlimited;
  if (s.empty()) return InvalidArgument("empty time limit");
  int64_t days = 0;
  std::string_view rest = s;
  size_t dash = s.find('-');
  bool has_days = dash != std::string_view::npos;
  if (has_days) {
    auto d = ParseUint(s.substr(0, dash), "days");
    if (!d.ok()) return InvalidArgument("invalid time limit \"" + std::string(s) + "\"");
    days = static_cast<int64_t>(*d);
    rest = s.substr(dash + 1);
  }
  auto f = SplitNumbers(rest, s);
  if (!f.ok()) return f.status();
  const auto& v = *f;
  // Far beyond any limit a caller accepts (common/input_limits.h), and short of int64 overflow.
  constexpr int64_t kHuge = 1'000'000'000'000;
  bool huge_field = std::any_of(v.begin(), v.end(), [](int64_t x) { return x > kHuge / 3600; });
  if (days > kHuge / 86400 || huge_field)
    return InvalidArgument("time limit \"" + std::string(s) + "\" is too large");
  int64_t secs = 0;
  if (has_days) {  // D-H, D-H:M, D-H:M:S
    secs = v[0] * 3600 + (v.size() > 1 ? v[1] * 60 : 0) + (v.size() > 2 ? v[2] : 0);
  } else if (v.size() == 1) {  // M
    secs = v[0] * 60;
  } else if (v.size() == 2) {  // M:S
    secs = v[0] * 60 + v[1];
  } else {  // H:M:S
    secs = v[0] * 3600 + v[1] * 60 + v[2];
  }
  return days * 86400 + secs;
}

std::string FormatDuration(int64_t seconds) {
  if (seconds < 0) return "UNLIMITED";
  int64_t d = seconds / 86400, h = (seconds / 3600) % 24, m = (seconds / 60) % 60, s = seconds % 60;
  char buf[64];
  if (d > 0) {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", (long long)d, (long long)h,
                  (long long)m, (long long)s);
  } else if (h > 0) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", (long long)h, (long long)m, (long long)s);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", (long long)m, (long long)s);
  }
  return buf;
}

Result<uint64_t> ParseMemMiB(std::string_view s) {
  std::string_view num = s;
  uint64_t mult_kib = 1024;  // default unit MiB, expressed in KiB
  if (!num.empty() && (num.back() == 'B' || num.back() == 'b') && num.size() > 1 &&
      std::isalpha(static_cast<unsigned char>(num[num.size() - 2])))
    num.remove_suffix(1);
  if (!num.empty() && std::isalpha(static_cast<unsigned char>(num.back()))) {
    switch (std::toupper(static_cast<unsigned char>(num.back()))) {
      case 'K': mult_kib = 1; break;
      case 'M': mult_kib = 1024; break;
      case 'G': mult_kib = 1024ull * 1024; break;
      case 'T': mult_kib = 1024ull * 1024 * 1024; break;
      default: return InvalidArgument("invalid memory size \"" + std::string(s) + "\" (units: K, M, G, T)");
    }
    num.remove_suffix(1);
  }
  auto n = ParseUint(num, "memory size");
  if (!n.ok()) return InvalidArgument("invalid memory size \"" + std::string(s) + "\"");
  // Bound the result to 2^40 MiB (also keeps the KiB product below from overflowing).
  if (*n > ((1ull << 40) * 1024) / mult_kib)
    return InvalidArgument("memory size too large \"" + std::string(s) + "\"");
  uint64_t kib = *n * mult_kib;
  return (kib + 1023) / 1024;
}

std::string FormatMemMiB(uint64_t mib) {
  // As Slurm's convert_num_unit(..., CONVERT_NUM_UNIT_EXACT): divide by 1024 while nothing is
  // lost (half units count as exact), so 2000 -> "2000M", 1536 -> "1.50G", 4096 -> "4G".
  static const char kUnit[] = "MGTP";
  double num = static_cast<double>(mib);
  int u = 0;
  while (num >= 1024 && static_cast<uint64_t>(num) % 512 == 0 && u < 3) {
    num /= 1024;
    ++u;
  }
  char buf[48];
  auto whole = static_cast<uint64_t>(num);
  if (static_cast<double>(whole) == num)
    std::snprintf(buf, sizeof buf, "%llu%c", static_cast<unsigned long long>(whole), kUnit[u]);
  else
    std::snprintf(buf, sizeof buf, "%.2f%c", num, kUnit[u]);
  return buf;
}

std::string FormatTimestamp(int64_t epoch, bool unknown_word) {
  if (epoch <= 0) return unknown_word ? "Unknown" : "N/A";
  time_t t = static_cast<time_t>(epoch);
  struct tm tm;
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

}  // namespace tessera
