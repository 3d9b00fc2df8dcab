#pragma once
// The association data (issue 16 §1): accounts (a tree under the implicit "root"), users with
// a default account, user associations (user x account, with limits, shares and QoS) and QoS.
// A plain value: the manager (assoc_manager.h) keeps the durable copy and derives the live
// SchedConfig from it; operations (assoc_ops.h) compute a new AssocDb from an old one.
//
// Records reuse the scheduler's types (ctld/sched/sched_config.h), so every field the
// scheduler, fair share and preemption read travels unchanged.
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "ctld/sched/sched_config.h"

namespace tessera::ctld::accounts {

inline constexpr const char* kRootAccount = "root";

struct UserRecord {
  std::string name;
  std::string default_account;
};

struct AssocDb {
  std::map<std::string, sched::AccountConfig> accounts;  // never "root" (parent "" = root)
  std::map<std::string, UserRecord> users;
  std::map<std::pair<std::string, std::string>, sched::UserAssocConfig> assocs;  // (user, acct)
  std::map<std::string, sched::QosConfig> qos;

  bool operator==(const AssocDb& o) const;

  // Every account's parent exists (or is root) and the tree has no cycle; every association's
  // user and account exist; every user has at least one association and its default account
  // is one of them; QoS names exist (when any QoS is stored); a default QoS is allowed. The
  // first problem, in sacctmgr's words, naming the record.
  Status Validate() const;
  // The sub-accounts of `account` ("" = root's children), sorted.
  std::vector<std::string> Children(const std::string& account) const;
  std::vector<std::string> UsersOf(const std::string& account) const;
  std::vector<std::string> AccountsOf(const std::string& user) const;
};

// The associations a configuration declares (AccountName=, UserName=, QOSName= lines).
AssocDb FromConfig(const sched::SchedConfig& c);

// Adds to `db` what `config` has and `db` lacks (accounts, users, associations, QoS), except
// entries already in `seen` (imported once before: an entry tacctmgr deleted stays deleted);
// every entry of `config` is then in `seen` ("account\nphys", "user\nalice", "assoc\nalice\n
// phys", "qos\nnormal"). What both have but differently is left as `db` has it; each such
// conflict is described in `conflicts` ("<where>: account phys differs from the association
// store; the store's is kept (change it with tacctmgr)"). Returns true when something was added.
bool AddMissing(AssocDb& db, const AssocDb& config, std::set<std::string>* seen,
                std::vector<std::string>* conflicts);

// The live configuration: `base` (tessera.conf) with accounts, user associations, default
// accounts and QoS replaced by the store's. Fields the store does not hold are kept from
// `base`'s record of the same name (a hook for fields other helpers add to QosConfig /
// AccountConfig before the store's codec learns them); `base.default_qos` is kept.
sched::SchedConfig Overlay(const sched::SchedConfig& base, const AssocDb& db);

}  // namespace tessera::ctld::accounts
