#include "ctld/accounts/assoc_codec.h"

#include <boost/json.hpp>

#include <map>

namespace tessera::ctld::accounts {
namespace json = boost::json;
namespace {

json::value Tres(const sched::TresLimit& t) {
  return json::object{{"cpu", t.cpu}, {"mem_mib", t.mem_mib}, {"gpu", t.gpu}, {"node", t.node}};
}

json::value Strings(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

json::value Limits(const sched::AssocLimits& l) {
  return json::object{{"grp_tres", Tres(l.grp_tres)},
                      {"grp_jobs", l.grp_jobs},
                      {"grp_submit_jobs", l.grp_submit_jobs},
                      {"max_tres_per_job", Tres(l.max_tres_per_job)},
                      {"max_jobs", l.max_jobs},
                      {"max_submit_jobs", l.max_submit_jobs},
                      {"max_wall", l.max_wall}};
}

// Lenient readers: a missing key keeps `out` as it is.
void Get(const json::object& o, const char* k, int64_t& out) {
  if (const json::value* v = o.if_contains(k)) out = v->to_number<int64_t>();
}
void Get(const json::object& o, const char* k, uint32_t& out) {
  if (const json::value* v = o.if_contains(k)) out = v->to_number<uint32_t>();
}
void Get(const json::object& o, const char* k, bool& out) {
  if (const json::value* v = o.if_contains(k)) out = v->as_bool();
}
void Get(const json::object& o, const char* k, std::string& out) {
  if (const json::value* v = o.if_contains(k)) out = std::string(v->as_string());
}
void Get(const json::object& o, const char* k, std::vector<std::string>& out) {
  if (const json::value* v = o.if_contains(k)) {
    out.clear();
    for (const auto& e : v->as_array()) out.emplace_back(e.as_string());
  }
}
void Get(const json::object& o, const char* k, sched::TresLimit& t) {
  if (const json::value* v = o.if_contains(k)) {
    const json::object& x = v->as_object();
    Get(x, "cpu", t.cpu);
    Get(x, "mem_mib", t.mem_mib);
    Get(x, "gpu", t.gpu);
    Get(x, "node", t.node);
  }
}
void Get(const json::object& o, const char* k, sched::AssocLimits& l) {
  if (const json::value* v = o.if_contains(k)) {
    const json::object& x = v->as_object();
    Get(x, "grp_tres", l.grp_tres);
    Get(x, "grp_jobs", l.grp_jobs);
    Get(x, "grp_submit_jobs", l.grp_submit_jobs);
    Get(x, "max_tres_per_job", l.max_tres_per_job);
    Get(x, "max_jobs", l.max_jobs);
    Get(x, "max_submit_jobs", l.max_submit_jobs);
    Get(x, "max_wall", l.max_wall);
  }
}

std::string Encode(const sched::AccountConfig& a) {
  return json::serialize(json::object{
      {"name", a.name}, {"parent", a.parent}, {"description", a.description},
      {"organization", a.organization}, {"fairshare", a.fairshare}, {"limits", Limits(a.limits)},
      {"qos", Strings(a.qos)}, {"default_qos", a.default_qos}, {"guarantee", Tres(a.guarantee)},
      {"limit", Tres(a.limit)}, {"weight", a.weight}, {"reclaimable", a.reclaimable}});
}

sched::AccountConfig DecodeAccount(const json::object& o) {
  sched::AccountConfig a;
  Get(o, "name", a.name);
  Get(o, "parent", a.parent);
  Get(o, "description", a.description);
  Get(o, "organization", a.organization);
  Get(o, "fairshare", a.fairshare);
  Get(o, "limits", a.limits);
  a.grp_tres = a.limits.grp_tres;
  a.grp_jobs = a.limits.grp_jobs;
  Get(o, "qos", a.qos);
  Get(o, "default_qos", a.default_qos);
  Get(o, "guarantee", a.guarantee);
  Get(o, "limit", a.limit);
  Get(o, "weight", a.weight);
  Get(o, "reclaimable", a.reclaimable);
  return a;
}

std::string Encode(const sched::UserAssocConfig& u) {
  return json::serialize(json::object{{"user", u.user},
                                      {"account", u.account},
                                      {"fairshare", u.fairshare},
                                      {"limits", Limits(u.limits)},
                                      {"qos", Strings(u.qos)},
                                      {"default_qos", u.default_qos}});
}

sched::UserAssocConfig DecodeAssoc(const json::object& o) {
  sched::UserAssocConfig u;
  Get(o, "user", u.user);
  Get(o, "account", u.account);
  Get(o, "fairshare", u.fairshare);
  Get(o, "limits", u.limits);
  Get(o, "qos", u.qos);
  Get(o, "default_qos", u.default_qos);
  return u;
}

std::string Encode(const UserRecord& u) {
  return json::serialize(json::object{{"name", u.name}, {"default_account", u.default_account}});
}

UserRecord DecodeUser(const json::object& o) {
  UserRecord u;
  Get(o, "name", u.name);
  Get(o, "default_account", u.default_account);
  return u;
}

// Preemption (issue 16 §4, h16g): Preempt=, PreemptMode=, GraceTime=, PreemptExemptTime= are
// one "preempt" object, written when preempt_stored (a row without it keeps tessera.conf's).
std::string Encode(const sched::QosConfig& q) {
  json::object o{{"name", q.name},
                 {"priority", q.priority},
                 {"max_wall", q.max_wall},
                 {"max_jobs_per_user", q.max_jobs_per_user},
                 {"max_submit_jobs_per_user", q.max_submit_jobs_per_user},
                 {"max_tres_per_user", Tres(q.max_tres_per_user)},
                 {"grp_tres", Tres(q.grp_tres)},
                 {"grp_jobs", q.grp_jobs}};
  if (q.preempt_stored)
    o["preempt"] = json::object{{"preempt", Strings(q.preempt)},
                                {"mode", sched::PreemptModeName(q.preempt_mode)},
                                {"grace_time", q.grace_time},
                                {"exempt_time", q.preempt_exempt_time}};
  return json::serialize(o);
}

sched::QosConfig DecodeQos(const json::object& o) {
  sched::QosConfig q;
  Get(o, "name", q.name);
  Get(o, "priority", q.priority);
  Get(o, "max_wall", q.max_wall);
  Get(o, "max_jobs_per_user", q.max_jobs_per_user);
  Get(o, "max_submit_jobs_per_user", q.max_submit_jobs_per_user);
  Get(o, "max_tres_per_user", q.max_tres_per_user);
  Get(o, "grp_tres", q.grp_tres);
  Get(o, "grp_jobs", q.grp_jobs);
  if (const json::value* p = o.if_contains("preempt"); p && p->is_object()) {
    const json::object& po = p->as_object();
    Get(po, "preempt", q.preempt);
    std::string mode;
    Get(po, "mode", mode);
    auto m = mode.empty() ? Result<sched::PreemptModeSpec>(sched::PreemptModeSpec{})
                          : sched::ParsePreemptMode(mode);
    if (m.ok()) q.preempt_mode = m->kind;
    Get(po, "grace_time", q.grace_time);
    Get(po, "exempt_time", q.preempt_exempt_time);
    q.preempt_stored = true;
  }
  return q;
}

std::map<std::pair<std::string, std::string>, std::string> RowMap(const AssocDb& db) {
  std::map<std::pair<std::string, std::string>, std::string> m;
  for (const auto& r : EncodeRows(db)) m[{r.kind, r.name}] = r.record;
  return m;
}

}  // namespace

std::vector<AssocRow> EncodeRows(const AssocDb& db) {
  std::vector<AssocRow> rows;
  for (const auto& [name, a] : db.accounts) rows.push_back({"account", name, Encode(a)});
  for (const auto& [key, u] : db.assocs)
    rows.push_back({"assoc", key.first + '\n' + key.second, Encode(u)});
  for (const auto& [name, q] : db.qos) rows.push_back({"qos", name, Encode(q)});
  for (const auto& [name, u] : db.users) rows.push_back({"user", name, Encode(u)});
  return rows;
}

Result<AssocDb> DecodeRows(const std::vector<AssocRow>& rows) {
  AssocDb db;
  for (const auto& r : rows) {
    try {
      json::value v = json::parse(r.record);
      const json::object& o = v.as_object();
      if (r.kind == "account") {
        db.accounts[r.name] = DecodeAccount(o);
      } else if (r.kind == "assoc") {
        sched::UserAssocConfig u = DecodeAssoc(o);
        db.assocs[{u.user, u.account}] = u;
      } else if (r.kind == "qos") {
        db.qos[r.name] = DecodeQos(o);
      } else if (r.kind == "user") {
        db.users[r.name] = DecodeUser(o);
      }  // other kinds: written by a newer version; ignored
    } catch (const std::exception& e) {
      return Status(Code::kDataLoss, "association store: cannot decode " + r.kind + " row \"" +
                                         r.name + "\": " + e.what());
    }
  }
  return db;
}

void DiffRows(const AssocDb& before, const AssocDb& after, Batch* batch, size_t* changes) {
  auto old_rows = RowMap(before), new_rows = RowMap(after);
  size_t n = 0;
  for (const auto& [key, record] : new_rows) {
    auto it = old_rows.find(key);
    if (it != old_rows.end() && it->second == record) continue;
    batch->PutAssoc({key.first, key.second, record});
    ++n;
  }
  for (const auto& [key, record] : old_rows) {
    if (new_rows.count(key)) continue;
    batch->DeleteAssoc(key.first, key.second);
    ++n;
  }
  if (changes) *changes = n;
}

}  // namespace tessera::ctld::accounts
