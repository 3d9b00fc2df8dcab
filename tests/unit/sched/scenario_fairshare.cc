// Scenario keys of fair share (issue 16 §3; tests/scenarios/README.md "Fair share"):
//   usage ACCOUNT USER VALUE [at=EPOCH]   raw usage (billing-seconds) recorded at EPOCH (default:
//                                          now); decayed to `now` with PriorityDecayHalfLife
//   charge ACCOUNT USER billing=B from=T0 to=T1   a job that ran T0..T1 charged B units/s,
//                                          charged in one step at T1, then decayed to now
//   usage_reset last=EPOCH                 the last usage reset; PriorityUsageResetPeriod's resets
//                                          after it up to now zero what was recorded before them
//                                          (a charge spanning one counts from it)
//   expect fairshare ID VALUE              job ID's fair-share factor (|diff| <= 1e-6)
// Any of the first three turns fair share on: the runner fills JobSnap::fairshare (FillFairshare)
// before the cycle.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include "ctld/sched/fairshare.h"
#include "tests/unit/sched/scenario.h"
#include "tests/unit/sched/scenario_fairshare.h"

namespace tessera::sched::testing {
namespace {

Result<int64_t> I64(const std::string& v, const std::string& what) {
  char* end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end) return InvalidArgument("bad " + what + " \"" + v + "\"");
  return static_cast<int64_t>(n);
}

Result<double> Dbl(const std::string& v, const std::string& what) {
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end) return InvalidArgument("bad " + what + " \"" + v + "\"");
  return d;
}

}  // namespace

Result<bool> FairshareScenarioLine(const std::vector<std::string>& w, Scenario& sc) {
  const std::string& k = w[0];
  if (k != "usage" && k != "charge" && k != "usage_reset") return false;
  sc.fairshare_on = true;
  std::map<std::string, std::string> kv;
  for (const auto& x : w) {
    size_t eq = x.find('=');
    if (eq != std::string::npos) kv[x.substr(0, eq)] = x.substr(eq + 1);
  }
  if (k == "usage_reset") {
    auto t = I64(kv["last"], "last");
    if (!t.ok()) return t.status();
    sc.usage_last_reset = *t;
    return true;
  }
  if (w.size() < 4) return InvalidArgument(k + " ACCOUNT USER ...");
  ScenarioUsage u{w[1], w[2]};
  if (k == "usage") {
    auto v = Dbl(w[3], "usage");
    if (!v.ok()) return v.status();
    u.value = *v;
    u.at = -1;
    if (kv.count("at")) {
      auto t = I64(kv["at"], "at");
      if (!t.ok()) return t.status();
      u.at = *t;
    }
  } else {
    auto b = Dbl(kv["billing"], "billing");
    auto t0 = I64(kv["from"], "from");
    auto t1 = I64(kv["to"], "to");
    if (!b.ok() || !t0.ok() || !t1.ok() || *t1 < *t0)
      return InvalidArgument("charge ACCOUNT USER billing=B from=T0 to=T1 (T1 >= T0)");
    u.billing = *b;
    u.from = *t0;
    u.at = *t1;
  }
  sc.usage.push_back(u);
  return true;
}

void ApplyScenarioFairshare(Scenario& sc, const SchedConfig& cfg) {
  if (!sc.fairshare_on) return;
  int64_t now = sc.snap.now, hl = cfg.priority_decay_half_life;
  int64_t reset_at = -1;  // the latest reset at or before now: usage before it is gone
  auto period = ParseResetPeriod(cfg.priority_usage_reset);
  if (period.ok() && *period == ResetPeriod::kNow) reset_at = now;
  if (period.ok() && sc.usage_last_reset >= 0)
    for (int64_t r = NextReset(*period, sc.usage_last_reset); r > 0 && r <= now;
         r = NextReset(*period, r))
      reset_at = r;
  UsageMap usage;
  for (const auto& u : sc.usage) {
    int64_t at = u.at < 0 ? now : u.at;
    if (at <= reset_at) continue;
    double v = u.value;
    if (u.from >= 0) v = Advance(0, u.billing, hl, double(at - std::max(u.from, reset_at)));
    usage[{u.account, u.user}] += Advance(v, 0, hl, double(now - at));
  }
  FillFairshare(sc.snap, cfg, usage);
}

std::string CheckFairshareExpect(const Scenario& sc, const Expect& e) {
  if (e.kind != "fairshare") return "?";
  for (const auto& j : sc.snap.pending) {
    if (j.id != e.job) continue;
    auto want = Dbl(e.args.empty() ? "" : e.args[0], "fairshare");
    if (!want.ok()) return want.status().message();
    if (std::fabs(j.fairshare - *want) <= 1e-6) return "";
    std::ostringstream o;
    o << "expected fairshare " << *want << " got " << j.fairshare;
    return o.str();
  }
  return "no pending job " + std::to_string(e.job);
}

}  // namespace tessera::sched::testing
