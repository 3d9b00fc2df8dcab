#include "ctld/accounts/assoc_db.h"

#include <algorithm>
#include <functional>
#include <set>

#include "ctld/accounts/assoc_codec.h"

namespace tessera::ctld::accounts {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The stored fields of an account / QoS over `to` (which may carry fields the store does not
// hold yet, from tessera.conf).
void CopyStored(const sched::AccountConfig& from, sched::AccountConfig& to) {
  to.name = from.name;
  to.parent = from.parent;
  to.grp_tres = from.limits.grp_tres;
  to.grp_jobs = from.limits.grp_jobs;
  to.fairshare = from.fairshare;
  to.limits = from.limits;
  to.qos = from.qos;
  to.default_qos = from.default_qos;
  to.description = from.description;
  to.organization = from.organization;
  to.guarantee = from.guarantee;
  to.limit = from.limit;
  to.weight = from.weight;
  to.reclaimable = from.reclaimable;
}

void CopyStored(const sched::QosConfig& from, sched::QosConfig& to) {
  to.name = from.name;
  to.priority = from.priority;
  to.max_wall = from.max_wall;
  to.max_jobs_per_user = from.max_jobs_per_user;
  to.max_submit_jobs_per_user = from.max_submit_jobs_per_user;
  to.max_tres_per_user = from.max_tres_per_user;
  to.grp_tres = from.grp_tres;
  to.grp_jobs = from.grp_jobs;
  if (from.preempt_stored) {  // issue 16 §4: else tessera.conf's stay (an older store)
    to.preempt = from.preempt;
    to.preempt_mode = from.preempt_mode;
    to.grace_time = from.grace_time;
    to.preempt_exempt_time = from.preempt_exempt_time;
    to.preempt_stored = true;
  }
}

Status CheckQos(const AssocDb& db, const std::string& what, const std::vector<std::string>& allowed,
                const std::string& def) {
  if (!db.qos.empty()) {
    for (const auto& q : allowed)
      if (!db.qos.count(q)) return InvalidArgument(what + ": Invalid qos specification: " + q);
    if (!def.empty() && !db.qos.count(def))
      return InvalidArgument(what + ": Invalid qos specification: DefaultQOS " + def);
  }
  if (!def.empty() && !allowed.empty() && !Has(allowed, def))
    return InvalidArgument(what + ": default QOS " + def +
                           " is not in the list of allowed QOS (" + [&] {
                             std::string s;
                             for (const auto& q : allowed) s += (s.empty() ? "" : ",") + q;
                             return s;
                           }() + ")");
  return Status::Ok();
}

}  // namespace

bool AssocDb::operator==(const AssocDb& o) const {
  auto a = EncodeRows(*this), b = EncodeRows(o);
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].kind != b[i].kind || a[i].name != b[i].name || a[i].record != b[i].record)
      return false;
  return true;
}

std::vector<std::string> AssocDb::Children(const std::string& account) const {
  std::vector<std::string> out;
  for (const auto& [name, a] : accounts)
    if (a.parent == account) out.push_back(name);
  return out;
}

std::vector<std::string> AssocDb::UsersOf(const std::string& account) const {
  std::vector<std::string> out;
  for (const auto& [key, u] : assocs)
    if (key.second == account) out.push_back(key.first);
  return out;
}

std::vector<std::string> AssocDb::AccountsOf(const std::string& user) const {
  std::vector<std::string> out;
  for (auto it = assocs.lower_bound({user, ""}); it != assocs.end() && it->first.first == user;
       ++it)
    out.push_back(it->first.second);
  return out;
}

Status AssocDb::Validate() const {
  for (const auto& [name, a] : accounts) {
    if (name == kRootAccount) return InvalidArgument("account root is implicit");
    if (!a.parent.empty() && !accounts.count(a.parent))
      return InvalidArgument("Parent account '" + a.parent + "' of account '" + name +
                             "' doesn't exist");
    std::string p = a.parent;
    for (size_t depth = 0; !p.empty(); ++depth) {
      if (p == name || depth > accounts.size())
        return InvalidArgument("account '" + name + "' would be its own ancestor");
      p = accounts.at(p).parent;
    }
    TESSERA_RETURN_IF_ERROR(CheckQos(*this, "account " + name, a.qos, a.default_qos));
  }
  for (const auto& [name, q] : qos)  // issue 16 §4: Preempt= names QoS that exist
    for (const auto& p : q.preempt)
      if (!qos.count(p))
        return InvalidArgument("QOS '" + name + "': Preempt names QOS '" + p + "', which doesn't exist");
  for (const auto& [key, u] : assocs) {
    if (!users.count(key.first)) return InvalidArgument("association of unknown user " + key.first);
    if (!accounts.count(key.second))
      return InvalidArgument("The account '" + key.second + "' doesn't exist");
    TESSERA_RETURN_IF_ERROR(
        CheckQos(*this, "user " + key.first + " account " + key.second, u.qos, u.default_qos));
  }
  for (const auto& [name, u] : users) {
    std::vector<std::string> mine = AccountsOf(name);
    if (mine.empty()) return InvalidArgument("user '" + name + "' has no association");
    if (!Has(mine, u.default_account))
      return InvalidArgument("default account '" + u.default_account + "' of user '" + name +
                             "' is not one of its associations (" + [&] {
                               std::string s;
                               for (const auto& a : mine) s += (s.empty() ? "" : ",") + a;
                               return s;
                             }() + ")");
  }
  return Status::Ok();
}

AssocDb FromConfig(const sched::SchedConfig& c) {
  AssocDb db;
  for (const auto& [name, a] : c.accounts) {
    sched::AccountConfig copy = a;
    copy.limits.grp_tres = a.grp_tres;
    copy.limits.grp_jobs = a.grp_jobs;
    db.accounts[name] = copy;
  }
  // sacctmgr's defaults: Description = the name; Organization = the parent's (the name under
  // root), resolved up the tree.
  for (auto& [name, a] : db.accounts) {
    if (a.description.empty()) a.description = name;
    std::string org = a.organization, at = name;
    for (size_t depth = 0; org.empty() && depth <= db.accounts.size(); ++depth) {
      const sched::AccountConfig& cur = db.accounts.at(at);
      if (!cur.organization.empty()) org = cur.organization;
      else if (cur.parent.empty() || !db.accounts.count(cur.parent)) org = at;
      else at = cur.parent;
    }
    a.organization = org;
  }
  for (const auto& u : c.user_assocs) db.assocs[{u.user, u.account}] = u;
  for (const auto& [user, account] : c.default_account) db.users[user] = {user, account};
  db.qos = c.qos;
  for (auto& [name, q] : db.qos) q.preempt_stored = true;  // imported with its preemption fields
  return db;
}

namespace {

// One kind of entry: adds `config`'s entries not in `db` and not seen, reports differences.
template <typename Map>
bool AddKind(Map& db, const Map& config, const char* kind, std::set<std::string>* seen,
             const std::function<void(const typename Map::key_type&, const typename Map::mapped_type&,
                                      const typename Map::mapped_type&)>& differs,
             const std::function<std::string(const typename Map::key_type&)>& name) {
  bool added = false;
  for (const auto& [key, rec] : config) {
    std::string id = std::string(kind) + '\n' + name(key);
    bool was_seen = seen && !seen->insert(id).second;
    auto it = db.find(key);
    if (it != db.end()) {
      differs(key, it->second, rec);
    } else if (!was_seen) {
      db[key] = rec;
      added = true;
    }
  }
  return added;
}

}  // namespace

bool AddMissing(AssocDb& db, const AssocDb& config, std::set<std::string>* seen,
                std::vector<std::string>* conflicts) {
  auto conflict = [&](const std::string& where, const std::string& what) {
    if (conflicts)
      conflicts->push_back((where.empty() ? std::string("tessera.conf") : where) + ": " + what +
                           " differs from the association store; the store's is kept (change it "
                           "with tacctmgr)");
  };
  auto same = [](AssocDb a, AssocDb b) { return a == b; };
  auto plain = [](const std::string& k) { return k; };
  auto pair = [](const std::pair<std::string, std::string>& k) {
    return k.first + '\n' + k.second;
  };
  bool added = AddKind<decltype(db.accounts)>(
      db.accounts, config.accounts, "account", seen,
      [&](const std::string& k, const sched::AccountConfig& mine, const sched::AccountConfig& theirs) {
        AssocDb x, y;
        x.accounts[k] = mine, y.accounts[k] = theirs;
        if (!same(x, y)) conflict(theirs.where, "account " + k);
      },
      plain);
  added |= AddKind<decltype(db.qos)>(
      db.qos, config.qos, "qos", seen,
      [&](const std::string& k, const sched::QosConfig& mine, const sched::QosConfig& theirs) {
        AssocDb x, y;
        x.qos[k] = mine, y.qos[k] = theirs;
        // A store row from before the preemption fields were stored: tessera.conf's apply.
        if (!mine.preempt_stored) y.qos[k].preempt_stored = false;
        if (!same(x, y)) conflict(theirs.where, "QOS " + k);
      },
      plain);
  added |= AddKind<decltype(db.assocs)>(
      db.assocs, config.assocs, "assoc", seen,
      [&](const std::pair<std::string, std::string>& k, const sched::UserAssocConfig& mine,
          const sched::UserAssocConfig& theirs) {
        AssocDb x, y;
        x.assocs[k] = mine, y.assocs[k] = theirs;
        if (!same(x, y))
          conflict(theirs.where, "association of user " + k.first + " with account " + k.second);
      },
      pair);
  added |= AddKind<decltype(db.users)>(
      db.users, config.users, "user", seen,
      [](const std::string&, const UserRecord&, const UserRecord&) {}, plain);
  // Entries whose other half tacctmgr deleted before: an association needs its account (else
  // it is not added) and its user (re-added with a default account among its associations).
  for (auto it = db.assocs.begin(); it != db.assocs.end();) {
    if (db.accounts.count(it->first.second)) {
      ++it;
      continue;
    }
    if (conflicts)
      conflicts->push_back(it->second.where + ": association of user " + it->first.first +
                           " with account " + it->first.second + " not added: the account is " +
                           "not in the association store");
    it = db.assocs.erase(it);
  }
  for (const auto& [key, u] : db.assocs) {
    UserRecord& rec = db.users[key.first];
    if (rec.name.empty()) rec = {key.first, key.second};
  }
  for (auto it = db.users.begin(); it != db.users.end();) {
    std::vector<std::string> mine = db.AccountsOf(it->first);
    if (mine.empty()) {
      it = db.users.erase(it);
      continue;
    }
    if (std::find(mine.begin(), mine.end(), it->second.default_account) == mine.end())
      it->second.default_account = mine.front();
    ++it;
  }
  return added;
}

sched::SchedConfig Overlay(const sched::SchedConfig& base, const AssocDb& db) {
  sched::SchedConfig c = base;
  c.accounts.clear();
  for (const auto& [name, a] : db.accounts) {
    auto it = base.accounts.find(name);
    sched::AccountConfig live = it == base.accounts.end() ? sched::AccountConfig{} : it->second;
    CopyStored(a, live);
    if (live.where.empty()) live.where = "association store";
    c.accounts[name] = std::move(live);
  }
  c.qos.clear();
  for (const auto& [name, q] : db.qos) {
    auto it = base.qos.find(name);
    sched::QosConfig live = it == base.qos.end() ? sched::QosConfig{} : it->second;
    CopyStored(q, live);
    if (live.where.empty()) live.where = "association store";
    c.qos[name] = std::move(live);
  }
  c.user_assocs.clear();
  for (const auto& [key, u] : db.assocs) c.user_assocs.push_back(u);
  c.default_account.clear();
  for (const auto& [name, u] : db.users) c.default_account[name] = u.default_account;
  return c;
}

}  // namespace tessera::ctld::accounts
