// add / modify / delete over the association data (contracts in assoc_ops.h).
#include "ctld/accounts/assoc_ops.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/config_file.h"

namespace tessera::ctld::accounts {
namespace {

using KVs = std::vector<std::pair<std::string, std::string>>;

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

Status Unknown(const std::string& key) { return InvalidArgument("Unknown option: " + key); }

Status BadValue(const std::string& key, const std::string& value, const Status& why) {
  return InvalidArgument("Bad value \"" + value + "\" for " + key + ": " + why.message());
}

// The names a request targets: positional names plus Name(s)= (and, for users, User(s)=;
// for accounts, Account(s)= when `account_is_name`) from `kvs`; the rest is returned in `rest`.
std::vector<std::string> TargetNames(const AssocRequest& r, const KVs& kvs, const char* alias,
                                     KVs* rest) {
  std::vector<std::string> names = r.names;
  for (const auto& [k, v] : kvs) {
    std::string c = CanonKey(k);
    if (c == "name" || (alias && c == alias)) {
      for (const auto& n : SplitList(v, true)) names.push_back(n);
    } else {
      rest->emplace_back(k, v);
    }
  }
  std::vector<std::string> uniq;
  for (const auto& n : names)
    if (std::find(uniq.begin(), uniq.end(), n) == uniq.end()) uniq.push_back(n);
  return uniq;
}

std::string SettingsText(const KVs& kvs) {
  std::string s;
  for (const auto& [k, v] : kvs) {
    std::string key = k;
    key.resize(std::max<size_t>(key.size(), 15), ' ');
    s += "  " + key + " = " + v + "\n";
  }
  return s;
}

// Applies `kvs` to `t` with `set`; the first unknown key or bad value is the error.
template <typename T, typename Setter>
Status ApplySettings(const KVs& kvs, T& t, Setter set) {
  for (const auto& [k, v] : kvs) {
    std::string c = CanonKey(k);
    auto known = set(c, v, t);
    if (!known.ok()) return BadValue(k, v, known.status());
    if (!*known) return Unknown(k);
  }
  return Status::Ok();
}

// ------------------------------------------------------------------ add

Result<AssocOutcome> AddAccounts(const AssocDb& db, const AssocRequest& r) {
  KVs settings;
  std::vector<std::string> names = TargetNames(r, r.set, "account", &settings);
  if (names.empty()) return InvalidArgument("Need name of account to add.");
  AssocOutcome out{db, ""};
  std::vector<std::string> added;
  for (const auto& name : names) {
    if (name == kRootAccount || db.accounts.count(name)) continue;
    sched::AccountConfig a;
    a.name = name;
    TESSERA_RETURN_IF_ERROR(ApplySettings(settings, a, sched::SetAccountField));
    if (a.description.empty()) a.description = name;
    if (a.organization.empty()) {
      auto p = db.accounts.find(a.parent);
      a.organization = p == db.accounts.end() ? name : p->second.organization;
    }
    if (!a.parent.empty() && !db.accounts.count(a.parent))
      return InvalidArgument("Parent account '" + a.parent + "' doesn't exist.");
    out.next.accounts[name] = a;
    added.push_back(name);
  }
  if (added.empty()) return Status(Code::kAlreadyExists, "Nothing new added.");
  out.message = " Adding Account(s)\n";
  for (const auto& n : added) out.message += "  " + n + "\n";
  if (!settings.empty()) out.message += " Settings\n" + SettingsText(settings);
  return out;
}

Result<AssocOutcome> AddUsers(const AssocDb& db, const AssocRequest& r) {
  KVs rest, settings;
  std::vector<std::string> names = TargetNames(r, r.set, "user", &rest);
  if (names.empty()) return InvalidArgument("Need name of user to add.");
  std::vector<std::string> accounts;
  std::string default_account;
  for (const auto& [k, v] : rest) {
    std::string c = CanonKey(k);
    if (c == "account") accounts = SplitList(v, true);
    else if (c == "defaultaccount") default_account = v;
    else settings.emplace_back(k, v);
  }
  if (accounts.empty() && !default_account.empty()) accounts.push_back(default_account);
  if (accounts.empty()) return InvalidArgument("Need name of account to add.");
  if (!default_account.empty() &&
      std::find(accounts.begin(), accounts.end(), default_account) == accounts.end())
    accounts.push_back(default_account);
  for (const auto& a : accounts)
    if (!db.accounts.count(a))
      return InvalidArgument("The account '" + a + "' doesn't exist. Make sure the accounts " +
                             "requested here have been added (tacctmgr add account ...).");
  sched::UserAssocConfig proto;
  TESSERA_RETURN_IF_ERROR(ApplySettings(settings, proto, sched::SetUserAssocField));
  AssocOutcome out{db, ""};
  std::string added;
  for (const auto& user : names) {
    for (const auto& a : accounts) {
      if (out.next.assocs.count({user, a})) continue;
      sched::UserAssocConfig u = proto;
      u.user = user;
      u.account = a;
      out.next.assocs[{user, a}] = u;
      added += "  U = " + user + " A = " + a + "\n";
    }
    UserRecord& rec = out.next.users[user];
    bool is_new = rec.name.empty();
    rec.name = user;
    if (is_new || !default_account.empty())
      rec.default_account = default_account.empty() ? accounts.front() : default_account;
  }
  if (added.empty() && out.next == db) return Status(Code::kAlreadyExists, "Nothing new added.");
  out.message = " Adding User(s)\n";
  for (const auto& n : names) out.message += "  " + n + "\n";
  out.message += " Associations =\n" + added;
  if (!settings.empty()) out.message += " Non Default Settings\n" + SettingsText(settings);
  return out;
}

Result<AssocOutcome> AddQos(const AssocDb& db, const AssocRequest& r) {
  KVs settings;
  std::vector<std::string> names = TargetNames(r, r.set, nullptr, &settings);
  if (names.empty()) return InvalidArgument("Need name of qos to add.");
  AssocOutcome out{db, ""};
  std::vector<std::string> added;
  for (const auto& name : names) {
    if (db.qos.count(name)) continue;
    sched::QosConfig q;
    q.name = name;
    TESSERA_RETURN_IF_ERROR(ApplySettings(settings, q, sched::SetQosField));
    out.next.qos[name] = q;
    added.push_back(name);
  }
  if (added.empty()) return Status(Code::kAlreadyExists, "Nothing new added.");
  out.message = " Adding QOS(s)\n";
  for (const auto& n : added) out.message += "  " + n + "\n";
  if (!settings.empty()) out.message += " Settings\n" + SettingsText(settings);
  return out;
}

// ------------------------------------------------------------------ modify

// The user associations selected by `users` (all users when empty) and `accounts` (all of
// theirs when empty).
std::vector<std::pair<std::string, std::string>> SelectAssocs(
    const AssocDb& db, const std::vector<std::string>& users,
    const std::vector<std::string>& accounts) {
  std::vector<std::pair<std::string, std::string>> out;
  auto in = [](const std::vector<std::string>& v, const std::string& x) {
    return v.empty() || std::find(v.begin(), v.end(), x) != v.end();
  };
  for (const auto& [key, u] : db.assocs)
    if (in(users, key.first) && in(accounts, key.second)) out.push_back(key);
  return out;
}

Result<AssocOutcome> ModifyUsers(const AssocDb& db, const std::vector<std::string>& users,
                                 const std::vector<std::string>& accounts, const KVs& set) {
  if (users.empty())
    return InvalidArgument("You need to specify conditions (Name=) to modify users.");
  for (const auto& u : users)
    if (!db.users.count(u)) return NotFound("User '" + u + "' doesn't exist. Nothing modified");
  AssocOutcome out{db, ""};
  KVs assoc_set;
  for (const auto& [k, v] : set) {
    if (CanonKey(k) != "defaultaccount") {
      assoc_set.emplace_back(k, v);
      continue;
    }
    for (const auto& u : users) out.next.users[u].default_account = v;
  }
  auto keys = SelectAssocs(db, users, accounts);
  if (keys.empty() && !assoc_set.empty()) return NotFound("Nothing modified");
  for (const auto& key : keys)
    TESSERA_RETURN_IF_ERROR(
        ApplySettings(assoc_set, out.next.assocs[key], sched::SetUserAssocField));
  out.message = " Modified user associations...\n";
  for (const auto& key : keys)
    out.message += "  C = * A = " + key.second + " U = " + key.first + "\n";
  if (keys.empty()) {
    out.message = " Modified users...\n";
    for (const auto& u : users) out.message += "  " + u + "\n";
  }
  out.message += " Settings\n" + SettingsText(set);
  return out;
}

Result<AssocOutcome> Modify(const AssocDb& db, const AssocRequest& r) {
  if (r.set.empty()) return InvalidArgument("You didn't give me anything to set");
  KVs conds;
  if (r.entity == "qos") {
    std::vector<std::string> names = TargetNames(r, r.where, nullptr, &conds);
    if (!conds.empty()) return Unknown(conds.front().first);
    if (names.empty())
      return InvalidArgument("You need to specify conditions (Name=) to modify qos.");
    AssocOutcome out{db, " Modified qos...\n"};
    for (const auto& n : names) {
      if (!db.qos.count(n)) return NotFound("QOS '" + n + "' doesn't exist. Nothing modified");
      TESSERA_RETURN_IF_ERROR(ApplySettings(r.set, out.next.qos[n], sched::SetQosField));
      out.message += "  " + n + "\n";
    }
    out.message += " Settings\n" + SettingsText(r.set);
    return out;
  }
  std::vector<std::string> users, accounts;
  for (const auto& [k, v] : r.where) {
    std::string c = CanonKey(k);
    if (c == "user") users = SplitList(v, true);
    else if (c == "account") accounts = SplitList(v, true);
    else if (c != "name") return Unknown(k);
  }
  std::vector<std::string> names = TargetNames(r, r.where, nullptr, &conds);
  if (r.entity == "user") users.insert(users.end(), names.begin(), names.end());
  else accounts.insert(accounts.end(), names.begin(), names.end());
  if (r.entity == "user" || (r.entity == "assoc" && !users.empty()) || !users.empty())
    return ModifyUsers(db, users, accounts, r.set);
  if (accounts.empty())
    return InvalidArgument("You need to specify conditions (Name=) to modify accounts.");
  AssocOutcome out{db, " Modified account associations...\n"};
  for (const auto& a : accounts) {
    if (!db.accounts.count(a))
      return NotFound("Account '" + a + "' doesn't exist. Nothing modified");
    TESSERA_RETURN_IF_ERROR(ApplySettings(r.set, out.next.accounts[a], sched::SetAccountField));
    out.message += "  C = * A = " + a + "\n";
  }
  out.message += " Settings\n" + SettingsText(r.set);
  return out;
}

// ------------------------------------------------------------------ delete

Result<AssocOutcome> DeleteAccounts(const AssocDb& db, const std::vector<std::string>& names) {
  AssocOutcome out{db, " Deleting accounts...\n"};
  for (const auto& n : names) {
    if (n == kRootAccount) return InvalidArgument("The root account can not be removed");
    if (!db.accounts.count(n))
      return NotFound("Account '" + n + "' doesn't exist. Nothing deleted");
    auto kids = db.Children(n);
    auto users = db.UsersOf(n);
    if (!kids.empty() || !users.empty())
      return Status(Code::kFailedPrecondition,
                    "Can't delete account " + n + ": it still has " +
                        (kids.empty() ? "" : "sub-accounts (" + Join(kids) + ")") +
                        (!kids.empty() && !users.empty() ? " and " : "") +
                        (users.empty() ? "" : "users (" + Join(users) + ")") +
                        "; delete or move them first");
    out.next.accounts.erase(n);
    out.message += "  " + n + "\n";
  }
  return out;
}

Result<AssocOutcome> DeleteUsers(const AssocDb& db, const std::vector<std::string>& names,
                                 const std::vector<std::string>& accounts) {
  AssocOutcome out{db, " Deleting user associations...\n"};
  for (const auto& n : names) {
    if (!db.users.count(n)) return NotFound("User '" + n + "' doesn't exist. Nothing deleted");
    auto keys = SelectAssocs(db, {n}, accounts);
    if (keys.empty()) return NotFound("Nothing deleted");
    for (const auto& key : keys) {
      out.next.assocs.erase(key);
      out.message += "  C = * A = " + key.second + " U = " + n + "\n";
    }
    std::vector<std::string> left = out.next.AccountsOf(n);
    if (left.empty()) {
      out.next.users.erase(n);
    } else if (std::find(left.begin(), left.end(), db.users.at(n).default_account) == left.end()) {
      return Status(Code::kFailedPrecondition,
                    "You can not remove the default account (" + db.users.at(n).default_account +
                        ") of user " + n + "; set another DefaultAccount first (" + Join(left) +
                        ")");
    }
  }
  return out;
}

Result<AssocOutcome> DeleteQos(const AssocDb& db, const std::vector<std::string>& names) {
  AssocOutcome out{db, " Deleting QOS(s)...\n"};
  auto uses = [](const std::vector<std::string>& l, const std::string& d, const std::string& q) {
    return d == q || std::find(l.begin(), l.end(), q) != l.end();
  };
  for (const auto& n : names) {
    if (!db.qos.count(n)) return NotFound("QOS '" + n + "' doesn't exist. Nothing deleted");
    for (const auto& [name, a] : db.accounts)
      if (uses(a.qos, a.default_qos, n))
        return Status(Code::kFailedPrecondition, "QOS " + n + " is used by account " + name);
    for (const auto& [key, u] : db.assocs)
      if (uses(u.qos, u.default_qos, n))
        return Status(Code::kFailedPrecondition,
                      "QOS " + n + " is used by user " + key.first + " in account " + key.second);
    out.next.qos.erase(n);
    out.message += "  " + n + "\n";
  }
  return out;
}

Result<AssocOutcome> Delete(const AssocDb& db, const AssocRequest& r) {
  KVs conds;
  const char* alias = r.entity == "user" ? "user" : r.entity == "account" ? "account" : nullptr;
  std::vector<std::string> names = TargetNames(r, r.where, alias, &conds);
  std::vector<std::string> accounts;
  for (const auto& [k, v] : conds) {
    if (r.entity == "user" && CanonKey(k) == "account") accounts = SplitList(v, true);
    else return Unknown(k);
  }
  if (!r.set.empty()) return InvalidArgument("delete takes no set clause");
  if (names.empty()) return InvalidArgument("You need to specify conditions (Name=) to delete.");
  if (r.entity == "account") return DeleteAccounts(db, names);
  if (r.entity == "user") return DeleteUsers(db, names, accounts);
  if (r.entity == "qos") return DeleteQos(db, names);
  return InvalidArgument("delete association: use delete user NAME where account=ACCOUNT");
}

}  // namespace

std::string CanonKey(const std::string& key) {
  static const std::map<std::string, std::string> kAliases = {
      {"names", "name"}, {"users", "user"}, {"accounts", "account"}, {"acct", "account"},
      {"descr", "description"}, {"desc", "description"}, {"org", "organization"},
      {"parentname", "parent"}, {"share", "fairshare"}, {"shares", "fairshare"},
      {"defqos", "defaultqos"}, {"def qos", "defaultqos"}, {"defaultacct", "defaultaccount"},
      {"defacct", "defaultaccount"}, {"def acct", "defaultaccount"}, {"qoslevel", "qos"},
      {"maxtresperjob", "maxtres"}, {"maxtrespj", "maxtres"}, {"grpsubmit", "grpsubmitjobs"},
      {"maxsubmit", "maxsubmitjobs"}, {"maxwalldurationperjob", "maxwall"}};
  std::string k = ToLower(key);
  auto it = kAliases.find(k);
  return it == kAliases.end() ? k : it->second;
}

Status NormalizeRequest(AssocRequest& r) {
  std::string v = ToLower(r.verb), e = ToLower(r.entity);
  if (v == "create") v = "add";
  if (v == "update") v = "modify";
  if (v == "remove") v = "delete";
  if (v == "list") v = "show";
  if (v != "add" && v != "modify" && v != "delete" && v != "show")
    return InvalidArgument("Invalid keyword: " + r.verb);
  if (e == "accounts") e = "account";
  if (e == "users") e = "user";
  if (e == "association" || e == "associations" || e == "assocs") e = "assoc";
  if (e != "account" && e != "user" && e != "qos" && e != "assoc")
    return InvalidArgument("No valid entity in " + r.verb + " command: " + r.entity +
                           " (account, user, qos, association)");
  r.verb = v;
  r.entity = e;
  return Status::Ok();
}

Result<AssocOutcome> ApplyChange(const AssocDb& db, const AssocRequest& req) {
  AssocRequest r = req;
  TESSERA_RETURN_IF_ERROR(NormalizeRequest(r));
  Result<AssocOutcome> out = InvalidArgument("show is not a change");
  if (r.verb == "add") {
    if (!r.where.empty()) return InvalidArgument("add takes no where clause");
    out = r.entity == "account" ? AddAccounts(db, r)
          : r.entity == "user"  ? AddUsers(db, r)
          : r.entity == "qos"   ? AddQos(db, r)
                                : Result<AssocOutcome>(InvalidArgument(
                                      "add association: use add user NAME account=ACCOUNT"));
  } else if (r.verb == "modify") {
    out = Modify(db, r);
  } else if (r.verb == "delete") {
    out = Delete(db, r);
  }
  if (!out.ok()) return out;
  TESSERA_RETURN_IF_ERROR(out->next.Validate());
  return out;
}

}  // namespace tessera::ctld::accounts
