// SchedConfig keys of fair share (issue 16 §3): PriorityDecayHalfLife, PriorityUsageResetPeriod,
// PriorityFlags, a partition's TRESBillingWeights and an account's Fairshare=.
#include "ctld/sched/sched_config_fairshare.h"

#include <cctype>

#include "common/duration.h"
#include "ctld/sched/fairshare.h"

namespace tessera::sched {
namespace {

std::string Upper(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

Status BadFs(const std::string& where, const ConfigPair& p, const std::string& why) {
  return InvalidArgument(where + ": invalid value \"" + p.value + "\" for " + p.raw_key + ": " +
                         why);
}

Status ParseFlags(const std::string& where, const ConfigPair& p, SchedConfig& c) {
  c.priority_flags = 0;
  size_t start = 0;
  std::string v = p.value;
  while (start <= v.size()) {
    size_t end = v.find(',', start);
    if (end == std::string::npos) end = v.size();
    std::string f = ToLower(v.substr(start, end - start));
    start = end + 1;
    if (f.empty()) continue;
    if (f == "no_fair_tree") {
      c.priority_flags |= kPriorityFlagNoFairTree;
    } else if (f == "max_tres") {
      c.priority_flags |= kPriorityFlagMaxTres;
    } else if (f == "max_tres_gres") {
      c.priority_flags |= kPriorityFlagMaxTresGres;
    } else if (f == "accrue_always" || f == "calculate_running" || f == "depth_oblivious" ||
               f == "incr_only" || f == "no_normal_all" || f == "no_normal_assoc" ||
               f == "no_normal_part" || f == "no_normal_qos" || f == "no_normal_tres" ||
               f == "small_relative_to_time" || f == "fair_tree") {
      c.warnings.push_back(where + ": PriorityFlags " + f +
                           " is not implemented by Tessera; ignored");
    } else {
      return BadFs(where, p, "unknown flag \"" + f +
                                 "\" (known: NO_FAIR_TREE, MAX_TRES, MAX_TRES_GRES)");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<bool> ParseFairshareGlobal(const std::string& where, const ConfigPair& p, SchedConfig& c) {
  if (p.key == "prioritydecayhalflife") {
    auto t = ParseTimeLimit(p.value);
    if (!t.ok()) return BadFs(where, p, "expected a time such as 7-0 or 14-0 (0 = no decay)");
    c.priority_decay_half_life = *t < 0 ? 0 : *t;
    return true;
  }
  if (p.key == "priorityusageresetperiod") {
    auto r = ParseResetPeriod(p.value);
    if (!r.ok()) return BadFs(where, p, r.status().message());
    c.priority_usage_reset = Upper(p.value);
    return true;
  }
  if (p.key == "priorityflags") {
    TESSERA_RETURN_IF_ERROR(ParseFlags(where, p, c));
    return true;
  }
  if (p.key == "prioritycalcperiod") return true;  // usage is charged every tick
  return false;
}

Status ParseFairsharePartition(const ConfigLine& l, SchedConfig& c) {
  const std::string* name = l.Find("partitionname");
  const std::string* w = l.Find("tresbillingweights");
  if (!name || !w) return Status::Ok();
  auto parsed = ParseBillingWeights(*w);
  if (!parsed.ok())
    return InvalidArgument(l.Where() + ": invalid TRESBillingWeights for partition " + *name +
                           ": " + parsed.status().message());
  c.tres_billing_weights[*name] = *w;
  return Status::Ok();
}

Result<bool> ParseAccountFairshare(const std::string& where, const ConfigPair& p,
                                   AccountConfig& a) {
  if (p.key != "fairshare" && p.key != "shares") return false;
  auto n = ParseUint(p.value, p.raw_key);
  if (!n.ok() || *n > 0xffffffffull)
    return BadFs(where, p, "expected a non-negative integer number of shares");
  a.fairshare = static_cast<uint32_t>(*n);
  return true;
}

}  // namespace tessera::sched
