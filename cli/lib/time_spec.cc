#include "cli/lib/time_spec.h"

#include <cctype>
#include <ctime>
#include <limits>
#include <string>

#include "cli/lib/text_util.h"
#include "common/duration.h"

namespace tessera::cli {
namespace {

Status Bad(std::string_view s) {
  return InvalidArgument("invalid time specification \"" + std::string(s) + "\"");
}

struct tm LocalTm(int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm {};
  localtime_r(&tt, &tm);
  return tm;
}

int64_t MakeLocal(struct tm tm) {
  tm.tm_isdst = -1;
  return static_cast<int64_t>(mktime(&tm));
}

// Today at h:m:s, or tomorrow when that is not after now.
int64_t NextClock(int64_t now, int h, int m, int s) {
  struct tm tm = LocalTm(now);
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = s;
  int64_t t = MakeLocal(tm);
  if (t <= now) {
    tm.tm_mday += 1;
    t = MakeLocal(tm);
  }
  return t;
}

Result<int64_t> ParseRelative(std::string_view s, std::string_view whole, int64_t now) {
  if (s.empty()) return now;
  int sign = s[0] == '+' ? 1 : (s[0] == '-' ? -1 : 0);
  if (sign == 0) return Bad(whole);
  s.remove_prefix(1);
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  auto n = ParseUint(s.substr(0, digits), "count");
  if (!n.ok()) return Bad(whole);
  std::string unit = ToLower(s.substr(digits));
  int64_t mult = 0;
  if (unit.empty() || unit == "s" || unit == "sec" || unit == "second" || unit == "seconds") {
    mult = 1;
  } else if (unit == "m" || unit == "min" || unit == "minute" || unit == "minutes") {
    mult = 60;
  } else if (unit == "h" || unit == "hour" || unit == "hours") {
    mult = 3600;
  } else if (unit == "d" || unit == "day" || unit == "days") {
    mult = 86400;
  } else if (unit == "w" || unit == "week" || unit == "weeks") {
    mult = 7 * 86400;
  } else {
    return Bad(whole);
  }
  // Beyond any sane time (the callers bound the result) and short of int64 overflow.
  if (*n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 4 / mult)) return Bad(whole);
  return now + sign * static_cast<int64_t>(*n) * mult;
}

// "HH:MM[:SS]" -> h, m, s. False when malformed.
bool ParseClock(std::string_view s, int& h, int& m, int& sec) {
  auto parts = Split(s, ':');
  if (parts.size() < 2 || parts.size() > 3) return false;
  int v[3] = {0, 0, 0};
  for (size_t i = 0; i < parts.size(); ++i) {
    auto n = ParseUint(parts[i], "clock");
    if (!n.ok() || parts[i].size() > 2) return false;
    v[i] = static_cast<int>(*n);
  }
  if (v[0] > 23 || v[1] > 59 || v[2] > 59) return false;
  h = v[0];
  m = v[1];
  sec = v[2];
  return true;
}

Result<int64_t> ParseIsoDate(std::string_view s, std::string_view whole) {
  std::string_view date = s, clock;
  size_t t = s.find('T');
  if (t != std::string_view::npos) {
    date = s.substr(0, t);
    clock = s.substr(t + 1);
  }
  auto parts = Split(date, '-');
  if (parts.size() != 3) return Bad(whole);
  auto y = ParseUint(parts[0], "year"), mo = ParseUint(parts[1], "month"),
       d = ParseUint(parts[2], "day");
  if (!y.ok() || !mo.ok() || !d.ok() || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *y < 1970)
    return Bad(whole);
  int h = 0, m = 0, sec = 0;
  if (!clock.empty() && !ParseClock(clock, h, m, sec)) return Bad(whole);
  struct tm tm {};
  tm.tm_year = static_cast<int>(*y) - 1900;
  tm.tm_mon = static_cast<int>(*mo) - 1;
  tm.tm_mday = static_cast<int>(*d);
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = sec;
  return MakeLocal(tm);
}

Result<int64_t> ParseSlashDate(std::string_view s, std::string_view whole, int64_t now) {
  auto parts = Split(s, '/');
  if (parts.size() < 2 || parts.size() > 3) return Bad(whole);
  auto mo = ParseUint(parts[0], "month"), d = ParseUint(parts[1], "day");
  if (!mo.ok() || !d.ok() || *mo < 1 || *mo > 12 || *d < 1 || *d > 31) return Bad(whole);
  struct tm tm = LocalTm(now);
  if (parts.size() == 3) {
    auto y = ParseUint(parts[2], "year");
    if (!y.ok()) return Bad(whole);
    tm.tm_year = static_cast<int>(*y < 100 ? *y + 100 : *y - 1900);
  }
  tm.tm_mon = static_cast<int>(*mo) - 1;
  tm.tm_mday = static_cast<int>(*d);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  return MakeLocal(tm);
}

}  // namespace

int64_t LocalMidnight(int64_t now) {
  struct tm tm = LocalTm(now);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  return MakeLocal(tm);
}

Result<int64_t> ParseTimeSpec(std::string_view s, int64_t now) {
  std::string lower = ToLower(s);
  if (lower.empty()) return Bad(s);
  if (StartsWith(lower, "now")) return ParseRelative(std::string_view(lower).substr(3), s, now);
  if (lower == "today" || lower == "midnight") return LocalMidnight(now);
  if (lower == "tomorrow") return LocalMidnight(LocalMidnight(now) + 36 * 3600);
  if (lower == "noon") return NextClock(now, 12, 0, 0);
  if (lower == "elevenses") return NextClock(now, 11, 0, 0);
  if (lower == "fika") return NextClock(now, 15, 0, 0);
  if (lower == "teatime") return NextClock(now, 16, 0, 0);
  if (lower.find('/') != std::string::npos) return ParseSlashDate(lower, s, now);
  if (lower.find('-') != std::string::npos) return ParseIsoDate(ToUpper(s), s);
  int h = 0, m = 0, sec = 0;
  if (ParseClock(lower, h, m, sec)) return NextClock(now, h, m, sec);
  return Bad(s);
}

}  // namespace tessera::cli
