// Association keys of tessera.conf and tacctmgr (issue 16 §1): AccountName= keys beyond the
// base ones, UserName= lines, AccountingStorageEnforce=, and the field setters the association
// store reuses for tacctmgr's set clauses (contracts in sched_config.h).
#include <algorithm>
#include <set>

#include "common/duration.h"
#include "ctld/sched/sched_config.h"

namespace tessera::sched {
namespace {

bool Clears(const std::string& v) { return v.empty() || v == "-1" || ToLower(v) == "unlimited"; }

Result<int64_t> Count(const std::string& key, const std::string& v) {
  if (Clears(v)) return int64_t{-1};
  auto n = ParseUint(v, key);
  if (!n.ok()) return InvalidArgument("expected a non-negative integer or -1");
  return static_cast<int64_t>(*n);
}

Result<int64_t> Wall(const std::string& v) {
  if (Clears(v)) return int64_t{-1};
  auto t = ParseTimeLimit(v);
  if (!t.ok() || *t < 0) return InvalidArgument("expected a time such as 60, 1:00:00 or 1-0");
  return *t;
}

Result<uint32_t> Shares(const std::string& v) {
  if (ToLower(v) == "parent") return InvalidArgument("Fairshare=parent is not supported");
  auto n = ParseUint(v, "Fairshare");
  if (!n.ok() || *n > 0xffffffffull) return InvalidArgument("expected a non-negative integer");
  return static_cast<uint32_t>(*n);
}

Result<bool> Yes(const std::string& v) {
  std::string l = ToLower(v);
  if (l == "yes" || l == "true" || l == "1") return true;
  if (l == "no" || l == "false" || l == "0") return false;
  return InvalidArgument("expected yes or no");
}

// "QOS=a,b" replaces; "QOS+=c" / "QOS-=a" (sacctmgr's) come in as keys "qos+" / "qos-".
Result<bool> SetQosList(const std::string& key, const std::string& value,
                        std::vector<std::string>& list) {
  if (key == "qos" || key == "qoslevel") {
    list = value == "''" || value == "\"\"" ? std::vector<std::string>{} : SplitList(value, true);
    return true;
  }
  if (key == "qos+" || key == "qoslevel+") {
    for (const auto& q : SplitList(value, true))
      if (std::find(list.begin(), list.end(), q) == list.end()) list.push_back(q);
    return true;
  }
  if (key == "qos-" || key == "qoslevel-") {
    for (const auto& q : SplitList(value, true))
      list.erase(std::remove(list.begin(), list.end(), q), list.end());
    return true;
  }
  return false;
}

}  // namespace

Status MergeTres(const std::string& s, TresLimit& t) {
  if (Clears(s)) {
    t = TresLimit{};
    return Status::Ok();
  }
  for (const auto& item : SplitList(s, true)) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) return InvalidArgument("TRES item \"" + item + "\" has no '='");
    std::string name = ToLower(item.substr(0, eq));
    std::string val = item.substr(eq + 1);
    int64_t v = -1;
    if (val != "-1") {
      auto n = name == "mem" ? ParseMemMiB(val) : ParseUint(val, name);
      if (!n.ok()) return InvalidArgument("bad value in TRES item \"" + item + "\"");
      v = static_cast<int64_t>(*n);
    }
    if (name == "cpu") t.cpu = v;
    else if (name == "mem") t.mem_mib = v;
    else if (name == "node") t.node = v;
    else if (name == "gres/gpu" || name.rfind("gres/gpu:", 0) == 0) t.gpu = v;
    else return InvalidArgument("unknown TRES \"" + name + "\" (known: cpu, mem, node, gres/gpu)");
  }
  return Status::Ok();
}

std::string FormatTres(const TresLimit& t) {
  std::string out;
  auto add = [&](const char* name, const std::string& v) {
    out += (out.empty() ? "" : ",") + std::string(name) + "=" + v;
  };
  if (t.cpu >= 0) add("cpu", std::to_string(t.cpu));
  if (t.mem_mib >= 0) add("mem", FormatMemMiB(static_cast<uint64_t>(t.mem_mib)));
  if (t.node >= 0) add("node", std::to_string(t.node));
  if (t.gpu >= 0) add("gres/gpu", std::to_string(t.gpu));
  return out;
}

Result<bool> SetAssocLimit(const std::string& key, const std::string& value, AssocLimits& l) {
  TresLimit* tres = key == "grptres"                                        ? &l.grp_tres
                    : key == "maxtres" || key == "maxtresperjob" || key == "maxtrespj" ? &l.max_tres_per_job
                                                                            : nullptr;
  if (tres) {
    TESSERA_RETURN_IF_ERROR(MergeTres(value, *tres));
    return true;
  }
  int64_t* n = key == "grpjobs"                                     ? &l.grp_jobs
               : key == "grpsubmitjobs" || key == "grpsubmit"       ? &l.grp_submit_jobs
               : key == "maxjobs"                                   ? &l.max_jobs
               : key == "maxsubmitjobs" || key == "maxsubmit"       ? &l.max_submit_jobs
                                                                    : nullptr;
  if (n) {
    auto v = Count(key, value);
    if (!v.ok()) return v.status();
    *n = *v;
    return true;
  }
  if (key == "maxwall" || key == "maxwalldurationperjob") {
    auto v = Wall(value);
    if (!v.ok()) return v.status();
    l.max_wall = *v;
    return true;
  }
  return false;
}

Result<bool> SetAccountField(const std::string& key, const std::string& value, AccountConfig& a) {
  a.limits.grp_tres = a.grp_tres;  // the base fields may have been set by the line's parser
  a.limits.grp_jobs = a.grp_jobs;
  auto lim = SetAssocLimit(key, value, a.limits);
  if (!lim.ok() || *lim) {
    a.grp_tres = a.limits.grp_tres;  // the base fields the limits plugin reads
    a.grp_jobs = a.limits.grp_jobs;
    return lim;
  }
  if (key == "parent" || key == "parentname") {
    a.parent = value == "root" ? "" : value;
  } else if (key == "description" || key == "descr") {
    a.description = value;
  } else if (key == "organization" || key == "org") {
    a.organization = value;
  } else if (key == "fairshare" || key == "share" || key == "shares") {
    auto v = Shares(value);
    if (!v.ok()) return v.status();
    a.fairshare = *v;
  } else if (key == "defaultqos" || key == "defqos") {
    a.default_qos = value;
  } else if (key == "guarantee" || key == "limit") {
    TESSERA_RETURN_IF_ERROR(MergeTres(value, key == "guarantee" ? a.guarantee : a.limit));
  } else if (key == "weight") {
    auto v = Shares(value);
    if (!v.ok()) return v.status();
    a.weight = *v;
  } else if (key == "reclaimable") {
    auto v = Yes(value);
    if (!v.ok()) return v.status();
    a.reclaimable = *v;
  } else {
    return SetQosList(key, value, a.qos);
  }
  return true;
}

Result<bool> SetUserAssocField(const std::string& key, const std::string& value,
                               UserAssocConfig& u) {
  auto lim = SetAssocLimit(key, value, u.limits);
  if (!lim.ok() || *lim) return lim;
  if (key == "fairshare" || key == "share" || key == "shares") {
    auto v = Shares(value);
    if (!v.ok()) return v.status();
    u.fairshare = *v;
    return true;
  }
  if (key == "defaultqos" || key == "defqos") {
    u.default_qos = value;
    return true;
  }
  return SetQosList(key, value, u.qos);
}

Result<bool> SetQosField(const std::string& key, const std::string& value, QosConfig& q) {
  int64_t* n = key == "priority"                                             ? &q.priority
               : key == "maxjobsperuser" || key == "maxjobspu"               ? &q.max_jobs_per_user
               : key == "maxsubmitjobsperuser" || key == "maxsubmitjobspu" ||
                         key == "maxsubmitpu"                                ? &q.max_submit_jobs_per_user
               : key == "grpjobs"                                            ? &q.grp_jobs
                                                                             : nullptr;
  if (n) {
    auto v = Count(key, value);
    if (!v.ok()) return v.status();
    *n = key == "priority" && *v < 0 ? 0 : *v;
    return true;
  }
  if (key == "maxwall" || key == "maxwalldurationperjob") {
    auto v = Wall(value);
    if (!v.ok()) return v.status();
    q.max_wall = *v;
    return true;
  }
  if (key == "grptres") {
    TESSERA_RETURN_IF_ERROR(MergeTres(value, q.grp_tres));
    return true;
  }
  if (key == "maxtresperuser" || key == "maxtrespu") {
    TESSERA_RETURN_IF_ERROR(MergeTres(value, q.max_tres_per_user));
    return true;
  }
  // Issue 16 §4 (h16g): the preemption fields, as sacctmgr sets them.
  if (key == "preempt") {
    q.preempt = value == "''" || value == "\"\"" ? std::vector<std::string>{} : SplitList(value, true);
    q.preempt_stored = true;
    return true;
  }
  if (key == "preempt+" || key == "preempt-") {  // sacctmgr's Preempt+=x / Preempt-=x
    for (const auto& name : SplitList(value, true)) {
      auto at = std::find(q.preempt.begin(), q.preempt.end(), name);
      if (key == "preempt+" && at == q.preempt.end()) q.preempt.push_back(name);
      if (key == "preempt-" && at != q.preempt.end()) q.preempt.erase(at);
    }
    q.preempt_stored = true;
    return true;
  }
  if (key == "preemptmode") {
    auto m = ParsePreemptMode(value);
    if (!m.ok()) return m.status();
    q.preempt_mode = m->kind;
    q.preempt_stored = true;
    return true;
  }
  if (key == "gracetime") {
    auto v = Count(key, value);
    if (!v.ok()) return InvalidArgument("expected seconds (a non-negative integer)");
    q.grace_time = std::max<int64_t>(0, *v);
    q.preempt_stored = true;
    return true;
  }
  if (key == "preemptexempttime") {
    auto v = Wall(value);
    if (!v.ok()) return v.status();
    q.preempt_exempt_time = *v;
    q.preempt_stored = true;
    return true;
  }
  return false;
}

Result<bool> ParseAccountExtra(const ConfigPair& p, AccountConfig& a) {
  return SetAccountField(p.key, p.value, a);
}

Status ParseUserLine(const ConfigLine& l, SchedConfig& c) {
  std::string where = l.Where();
  std::string user, default_account;
  std::vector<std::string> accounts;
  UserAssocConfig proto;
  proto.where = where;
  for (const auto& p : l.pairs) {
    if (p.key == "username") {
      user = p.value;
    } else if (p.key == "accounts" || p.key == "account") {
      accounts = SplitList(p.value, true);
    } else if (p.key == "defaultaccount") {
      default_account = p.value;
    } else {
      auto known = SetUserAssocField(p.key, p.value, proto);
      if (!known.ok())
        return InvalidArgument(where + ": invalid value \"" + p.value + "\" for " + p.raw_key +
                               ": " + known.status().message());
      if (!*known) c.warnings.push_back(where + ": unknown user key " + p.raw_key + "; ignored");
    }
  }
  if (user.empty()) return InvalidArgument(where + ": UserName needs a name");
  if (accounts.empty() && !default_account.empty()) accounts.push_back(default_account);
  if (accounts.empty()) return InvalidArgument(where + ": user " + user + " needs Accounts=");
  if (default_account.empty()) default_account = accounts.front();
  if (std::find(accounts.begin(), accounts.end(), default_account) == accounts.end())
    accounts.push_back(default_account);
  for (const auto& a : accounts) {
    for (const auto& u : c.user_assocs)
      if (u.user == user && u.account == a)
        return InvalidArgument(where + ": user " + user + " is associated with account " + a +
                               " twice (also " + u.where + ")");
    UserAssocConfig u = proto;
    u.user = user;
    u.account = a;
    c.user_assocs.push_back(std::move(u));
  }
  c.default_account[user] = default_account;
  return Status::Ok();
}

Status ParseEnforce(const std::string& where, const std::string& value, SchedConfig& c) {
  c.enforce_associations = c.enforce_limits = c.enforce_qos = false;
  for (const auto& item : SplitList(ToLower(value), true)) {
    if (item == "associations") c.enforce_associations = true;
    else if (item == "limits" || item == "safe") c.enforce_limits = c.enforce_associations = true;
    else if (item == "qos") c.enforce_qos = c.enforce_associations = true;
    else if (item == "nojobs" || item == "nosteps" || item == "wckeys" || item == "all")
      c.warnings.push_back(where + ": AccountingStorageEnforce option " + item +
                           " is not implemented by Tessera; ignored");
    else if (item != "0" && item != "none")
      return InvalidArgument(where + ": invalid value \"" + value +
                             "\" for AccountingStorageEnforce: unknown option " + item +
                             " (known: associations, limits, qos, safe)");
  }
  return Status::Ok();
}

Status CheckAssocLines(const SchedConfig& c) {
  auto qos_known = [&](const std::string& q) { return c.qos.empty() || c.qos.count(q) > 0; };
  for (const auto& [name, a] : c.accounts) {
    for (const auto& q : a.qos)
      if (!qos_known(q)) return InvalidArgument(a.where + ": account " + name + ": unknown QOS " + q);
    if (!a.default_qos.empty() && !qos_known(a.default_qos))
      return InvalidArgument(a.where + ": account " + name + ": unknown DefaultQOS " + a.default_qos);
  }
  for (const auto& u : c.user_assocs) {
    if (!c.accounts.count(u.account))
      return InvalidArgument(u.where + ": user " + u.user + ": unknown account " + u.account +
                             " (add an AccountName= line)");
    for (const auto& q : u.qos)
      if (!qos_known(q)) return InvalidArgument(u.where + ": user " + u.user + ": unknown QOS " + q);
    if (!u.default_qos.empty() && !qos_known(u.default_qos))
      return InvalidArgument(u.where + ": user " + u.user + ": unknown DefaultQOS " + u.default_qos);
  }
  return Status::Ok();
}

}  // namespace tessera::sched
