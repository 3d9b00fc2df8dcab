#include "ctld/sched/fairshare.h"

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <set>

#include "common/config_file.h"
#include "common/mig_profiles.h"

namespace tessera::sched {
namespace {

std::string Lower(std::string s) { return ToLower(s); }

Result<double> Number(const std::string& item, const std::string& v, double* unit_mib) {
  std::string num = v;
  if (unit_mib && !num.empty() && std::isalpha(static_cast<unsigned char>(num.back()))) {
    char u = static_cast<char>(std::toupper(static_cast<unsigned char>(num.back())));
    num.pop_back();
    if (u == 'K') *unit_mib = 1.0 / 1024;
    else if (u == 'M') *unit_mib = 1;
    else if (u == 'G') *unit_mib = 1024;
    else if (u == 'T') *unit_mib = 1024.0 * 1024;
    else return InvalidArgument("item \"" + item + "\": unknown memory unit (K, M, G or T)");
  }
  char* end = nullptr;
  double d = std::strtod(num.c_str(), &end);
  if (num.empty() || *end || d < 0 || !std::isfinite(d))
    return InvalidArgument("item \"" + item + "\": expected a weight >= 0");
  return d;
}

}  // namespace

Result<BillingWeights> ParseBillingWeights(const std::string& s) {
  BillingWeights w;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos) return InvalidArgument("item \"" + item + "\" has no '='");
    std::string name = Lower(item.substr(0, eq));
    std::string val = item.substr(eq + 1);
    double unit = 1;
    auto d = Number(item, val, name == "mem" ? &unit : nullptr);
    if (!d.ok()) return d.status();
    if (name == "cpu") {
      w.cpu = *d;
    } else if (name == "mem") {
      w.mem_per_mib = *d / unit;
    } else if (name == "node") {
      w.node = *d;
    } else if (name == "gres/gpu") {
      w.gpu = *d;
    } else if (name.rfind("gres/gpu:", 0) == 0 && name.size() > 9) {
      w.gpu_type[name.substr(9)] = *d;
    } else {
      return InvalidArgument("item \"" + item +
                             "\": unknown TRES (known: CPU, Mem, Node, GRES/gpu, GRES/gpu:<type>)");
    }
    w.set = true;
  }
  return w;
}

double MigGpuFraction(const std::string& profile) {
  for (const auto& m : MigModels())
    if (const MigProfile* p = FindMigProfile(m, profile); p && m.compute_slices)
      return double(p->compute) / double(m.compute_slices);
  return 0;
}

void AddGpuUnit(TresCount& t, const std::string& model_or_profile, bool mig) {
  std::string key = Lower(model_or_profile);
  t.gpu += mig ? MigGpuFraction(key) : 1.0;
  if (!key.empty()) t.gpu_type[key] += 1;
}

double Billable(const TresCount& t, const BillingWeights& w, uint32_t flags) {
  if (!w.set) return t.cpu;
  std::vector<double> gres = {t.gpu * w.gpu};
  for (const auto& [type, n] : t.gpu_type) {
    auto it = w.gpu_type.find(type);
    if (it != w.gpu_type.end()) gres.push_back(n * it->second);
  }
  double cpu = t.cpu * w.cpu, mem = t.mem_mib * w.mem_per_mib, node = t.node * w.node;
  double gsum = 0, gmax = 0;
  for (double g : gres) gsum += g, gmax = std::max(gmax, g);
  if (flags & kPriorityFlagMaxTresGres) return std::max({cpu, mem, node}) + gsum;
  if (flags & kPriorityFlagMaxTres) return std::max({cpu, mem, node, gmax});
  return cpu + mem + node + gsum;
}

// ---------------------------------------------------------------- decay and reset

double DecayPerSecond(int64_t hl) { return hl > 0 ? 1.0 - 0.693 / double(hl) : 1.0; }

double DecayOver(int64_t hl, double dt) {
  if (hl <= 0 || dt <= 0) return 1.0;
  return std::max(DBL_MIN, std::pow(DecayPerSecond(hl), dt));
}

double Advance(double usage, double billing, int64_t hl, double dt) {
  if (dt <= 0) return usage;
  double d = DecayOver(hl, dt);
  return usage * d + billing * dt * d;
}

Result<ResetPeriod> ParseResetPeriod(const std::string& s) {
  std::string v = Lower(s);
  if (v == "none") return ResetPeriod::kNone;
  if (v == "now") return ResetPeriod::kNow;
  if (v == "daily") return ResetPeriod::kDaily;
  if (v == "weekly") return ResetPeriod::kWeekly;
  if (v == "monthly") return ResetPeriod::kMonthly;
  if (v == "quarterly") return ResetPeriod::kQuarterly;
  if (v == "yearly") return ResetPeriod::kYearly;
  return InvalidArgument("expected NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY");
}

int64_t NextReset(ResetPeriod p, int64_t last) {
  time_t t = static_cast<time_t>(last);
  struct tm tm {};
  gmtime_r(&t, &tm);
  tm.tm_sec = tm.tm_min = tm.tm_hour = 0;
  int64_t day0 = last - (last % 86400 + 86400) % 86400;  // 00:00 UTC of last's day
  switch (p) {
    case ResetPeriod::kDaily:
      return day0 + 86400;
    case ResetPeriod::kWeekly:  // next Sunday 00:00
      return day0 + 86400 * (7 - tm.tm_wday);
    case ResetPeriod::kMonthly:
      tm.tm_mday = 1;
      if (++tm.tm_mon > 11) tm.tm_mon = 0, tm.tm_year++;
      break;
    case ResetPeriod::kQuarterly:
      tm.tm_mday = 1;
      tm.tm_mon = (tm.tm_mon / 3 + 1) * 3;
      if (tm.tm_mon > 11) tm.tm_mon = 0, tm.tm_year++;
      break;
    case ResetPeriod::kYearly:
      tm.tm_mday = 1;
      tm.tm_mon = 0;
      tm.tm_year++;
      break;
    default:
      return 0;
  }
  return static_cast<int64_t>(timegm(&tm));
}

}  // namespace tessera::sched
