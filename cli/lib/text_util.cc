#include "cli/lib/text_util.h"

#include <cctype>
#include <cstdio>

#include "common/duration.h"

namespace tessera::cli {

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t pos = 0;
  while (true) {
    size_t next = s.find(sep, pos);
    out.emplace_back(s.substr(pos, next == std::string_view::npos ? s.npos : next - pos));
    if (next == std::string_view::npos) break;
    pos = next + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string ToUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ToLower(a) == ToLower(b);
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string PadField(std::string_view value, int width, bool right, bool cut) {
  if (width <= 0) return std::string(value);
  std::string v(value);
  if (cut && v.size() > static_cast<size_t>(width)) v.resize(width);
  if (v.size() >= static_cast<size_t>(width)) return v;
  std::string pad(width - v.size(), ' ');
  return right ? pad + v : v + pad;
}

std::string SqueueSecs(int64_t seconds) {
  if (seconds < 0 || seconds > 365LL * 24 * 3600) return "INVALID";
  return FormatDuration(seconds);
}

std::string SacctSecs(int64_t seconds) {
  if (seconds < 0) return "UNLIMITED";
  long long d = seconds / 86400, h = (seconds / 3600) % 24, m = (seconds / 60) % 60,
            s = seconds % 60;
  char buf[64];
  if (d > 0) {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", d, h, m, s);
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", h, m, s);
  }
  return buf;
}

Result<std::vector<std::string>> SplitDirectiveWords(std::string_view text) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else {
        cur += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '#') {
      break;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (quote) return InvalidArgument(std::string("unterminated ") + quote + " quote");
  if (in_word) words.push_back(cur);
  return words;
}

Result<std::vector<uint64_t>> ParseJobIdList(std::string_view s) {
  std::vector<uint64_t> ids;
  for (const std::string& piece : Split(s, ',')) {
    if (piece.empty()) continue;
    auto id = ParseUint(piece, "job id");
    if (!id.ok() || *id == 0) return InvalidArgument("invalid job id \"" + piece + "\"");
    ids.push_back(*id);
  }
  if (ids.empty()) return InvalidArgument("invalid job id \"" + std::string(s) + "\"");
  return ids;
}

}  // namespace tessera::cli
