// show account|user|qos|assoc (contracts in assoc_ops.h).
#include <algorithm>
#include <cstdio>
#include <functional>

#include "ctld/accounts/assoc_ops.h"
#include "ctld/sched/assoc.h"

namespace tessera::ctld::accounts {
namespace {

std::string Num(int64_t v) { return v < 0 ? "" : std::to_string(v); }

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

// Conditions of a show: key (canonical) -> accepted values.
struct Filter {
  std::map<std::string, std::vector<std::string>> conds;
  bool Has(const std::string& k) const { return conds.count(k) > 0; }
  bool Match(const std::string& k, const std::string& v) const {
    auto it = conds.find(k);
    return it == conds.end() ||
           std::find(it->second.begin(), it->second.end(), v) != it->second.end();
  }
};

Result<Filter> MakeFilter(const AssocRequest& r, const char* name_key,
                          const std::vector<std::string>& known) {
  Filter f;
  for (const auto& n : r.names) f.conds[name_key].push_back(n);
  for (const auto& [k, v] : r.where) {
    std::string c = CanonKey(k);
    if (c == "name") c = name_key;
    if (std::find(known.begin(), known.end(), c) == known.end())
      return InvalidArgument("Unknown condition: " + k);
    for (const auto& x : SplitList(v)) f.conds[c].push_back(x);
  }
  if (!r.set.empty()) return InvalidArgument("show takes no set clause");
  return f;
}

void AddLimits(ShowRow& row, const sched::AssocLimits& l) {
  row.insert(row.end(), {{"GrpJobs", Num(l.grp_jobs)},
                         {"GrpTRES", sched::FormatTres(l.grp_tres)},
                         {"GrpSubmit", Num(l.grp_submit_jobs)},
                         {"GrpWall", ""},
                         {"GrpTRESMins", ""},
                         {"MaxJobs", Num(l.max_jobs)},
                         {"MaxTRES", sched::FormatTres(l.max_tres_per_job)},
                         {"MaxTRESPerNode", ""},
                         {"MaxSubmit", Num(l.max_submit_jobs)},
                         {"MaxWall", FormatWall(l.max_wall)},
                         {"MaxTRESMins", ""},
                         {"GrpTRESRunMins", ""}});
}

ShowRow AccountRow(const sched::AccountConfig& a, const std::string& cluster) {
  ShowRow row = {{"Account", a.name},
                 {"Descr", a.description},
                 {"Org", a.organization},
                 {"Cluster", cluster},
                 {"ParentName", a.name == kRootAccount ? ""
                                : a.parent.empty()     ? kRootAccount
                                                       : a.parent},
                 {"User", ""},
                 {"Partition", ""},
                 {"Share", std::to_string(a.fairshare)},
                 {"Priority", ""}};
  AddLimits(row, a.limits);
  row.insert(row.end(), {{"QOS", Join(a.qos)},
                         {"Def QOS", a.default_qos},
                         {"Guarantee", sched::FormatTres(a.guarantee)},
                         {"Limit", sched::FormatTres(a.limit)},
                         {"Weight", std::to_string(a.weight)},
                         {"Reclaimable", a.reclaimable ? "Yes" : "No"}});
  return row;
}

ShowRow UserAssocRow(const sched::UserAssocConfig& u, const sched::AccountConfig& a,
                     const std::vector<std::string>& qos, const std::string& cluster) {
  ShowRow row = {{"Account", u.account},
                 {"Descr", a.description},
                 {"Org", a.organization},
                 {"Cluster", cluster},
                 {"ParentName", ""},
                 {"User", u.user},
                 {"Partition", ""},
                 {"Share", std::to_string(u.fairshare)},
                 {"Priority", ""}};
  AddLimits(row, u.limits);
  row.insert(row.end(), {{"QOS", Join(qos)},
                         {"Def QOS", u.default_qos},
                         {"Guarantee", ""},
                         {"Limit", ""},
                         {"Weight", ""},
                         {"Reclaimable", ""}});
  return row;
}

sched::AccountConfig RootAccount() {
  sched::AccountConfig root;
  root.name = kRootAccount;
  root.description = "default root account";
  root.organization = kRootAccount;
  return root;
}

Result<std::vector<ShowRow>> ShowAccounts(const AssocDb& db, const AssocRequest& r,
                                          const std::string& cluster) {
  auto f = MakeFilter(r, "account", {"account", "description", "organization", "parent"});
  if (!f.ok()) return f.status();
  std::vector<ShowRow> rows;
  std::vector<sched::AccountConfig> all = {RootAccount()};
  for (const auto& [name, a] : db.accounts) all.push_back(a);
  for (const auto& a : all) {
    std::string parent = a.name == kRootAccount ? "" : a.parent.empty() ? kRootAccount : a.parent;
    if (f->Match("account", a.name) && f->Match("description", a.description) &&
        f->Match("organization", a.organization) && f->Match("parent", parent))
      rows.push_back(AccountRow(a, cluster));
  }
  return rows;
}

Result<std::vector<ShowRow>> ShowUsers(const AssocDb& db, const AssocRequest& r) {
  auto f = MakeFilter(r, "user", {"user", "defaultaccount", "account"});
  if (!f.ok()) return f.status();
  std::vector<ShowRow> rows;
  for (const auto& [name, u] : db.users) {
    auto mine = db.AccountsOf(name);
    bool in_account = !f->Has("account") ||
                      std::any_of(mine.begin(), mine.end(), [&](const std::string& a) {
                        return f->Match("account", a);
                      });
    if (f->Match("user", name) && f->Match("defaultaccount", u.default_account) && in_account)
      rows.push_back({{"User", name}, {"Def Acct", u.default_account}, {"Admin", "None"},
                      {"Account", Join(mine)}});
  }
  return rows;
}

Result<std::vector<ShowRow>> ShowQos(const AssocDb& db, const AssocRequest& r) {
  auto f = MakeFilter(r, "name", {"name"});
  if (!f.ok()) return f.status();
  std::vector<ShowRow> rows;
  for (const auto& [name, q] : db.qos) {
    if (!f->Match("name", name)) continue;
    rows.push_back({{"Name", name}, {"Priority", std::to_string(q.priority)},
                    {"GraceTime", FormatWall(q.grace_time)}, {"Preempt", Join(q.preempt)},
                    {"PreemptExemptTime", FormatWall(q.preempt_exempt_time)},
                    {"PreemptMode", q.preempt_mode == sched::PreemptModeKind::kUnset
                                        ? "cluster" : sched::PreemptModeName(q.preempt_mode)},
                    {"Flags", ""}, {"UsageThres", ""},
                    {"UsageFactor", "1.000000"}, {"GrpTRES", sched::FormatTres(q.grp_tres)},
                    {"GrpTRESMins", ""}, {"GrpTRESRunMins", ""}, {"GrpJobs", Num(q.grp_jobs)},
                    {"GrpSubmit", ""}, {"GrpWall", ""}, {"MaxTRES", ""}, {"MaxTRESPerNode", ""},
                    {"MaxTRESMins", ""}, {"MaxWall", FormatWall(q.max_wall)},
                    {"MaxTRESPU", sched::FormatTres(q.max_tres_per_user)},
                    {"MaxJobsPU", Num(q.max_jobs_per_user)},
                    {"MaxSubmitPU", Num(q.max_submit_jobs_per_user)}, {"MaxTRESPA", ""},
                    {"MaxJobsPA", ""}, {"MaxSubmitPA", ""}, {"MinTRES", ""}});
  }
  return rows;
}

Result<std::vector<ShowRow>> ShowAssocs(const AssocDb& db, const AssocRequest& r,
                                        const std::string& cluster) {
  auto f = MakeFilter(r, "account", {"account", "user", "parent"});
  if (!f.ok()) return f.status();
  sched::SchedConfig live = Overlay(sched::SchedConfig{}, db);
  sched::AssocIndex idx(live);
  std::vector<ShowRow> rows;
  std::function<void(const sched::AccountConfig&)> walk = [&](const sched::AccountConfig& a) {
    std::string parent = a.name == kRootAccount ? "" : a.parent.empty() ? kRootAccount : a.parent;
    bool acct = f->Match("account", a.name) && f->Match("parent", parent);
    if (acct && !f->Has("user")) rows.push_back(AccountRow(a, cluster));
    if (acct)
      for (const auto& u : db.UsersOf(a.name))
        if (f->Match("user", u))
          rows.push_back(
              UserAssocRow(db.assocs.at({u, a.name}), a, idx.AllowedQos(u, a.name), cluster));
    for (const auto& child : db.Children(a.name == kRootAccount ? "" : a.name))
      walk(db.accounts.at(child));
  };
  walk(RootAccount());
  return rows;
}

}  // namespace

std::string FormatWall(int64_t s) {
  if (s < 0) return "";
  char buf[48];
  int64_t d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
  if (d)
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(d),
                  static_cast<long long>(h), static_cast<long long>(m), static_cast<long long>(sec));
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(h),
                  static_cast<long long>(m), static_cast<long long>(sec));
  return buf;
}

Result<std::vector<ShowRow>> ShowRows(const AssocDb& db, const AssocRequest& req,
                                      const std::string& cluster) {
  AssocRequest r = req;
  TESSERA_RETURN_IF_ERROR(NormalizeRequest(r));
  if (r.entity == "account") return ShowAccounts(db, r, cluster);
  if (r.entity == "user") return ShowUsers(db, r);
  if (r.entity == "qos") return ShowQos(db, r);
  return ShowAssocs(db, r, cluster);
}

}  // namespace tessera::ctld::accounts
