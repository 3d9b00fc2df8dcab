#pragma once
// tacctmgr's operations on the association data (sacctmgr's verbs and words): a request in,
// a new AssocDb and sacctmgr-like text out. Pure: the manager makes the result durable.
//
//   add account NAMES [Parent= Description= Organization= Fairshare= GrpTRES= GrpJobs=
//       GrpSubmitJobs= MaxTRES= MaxJobs= MaxSubmitJobs= MaxWall= QOS= DefaultQOS= Guarantee=
//       Limit= Weight= Reclaimable=]            existing names are skipped; none new: error
//   add user NAMES Account=A[,B] [DefaultAccount= Fairshare= <limits> QOS= DefaultQOS=]
//   add qos NAMES [Priority= MaxWall= MaxJobsPerUser= MaxSubmitJobsPerUser= MaxTRESPerUser=
//       GrpTRES= GrpJobs=]
//   modify account|user|qos [where] NAMES|Name=... [Account=... for users] set KEY=VALUE...
//   delete account|user|qos NAMES [where Account=... for users]
//   show account|user|qos|assoc [where] [Name= Account= User= Parent= ...]
// Keys are case-insensitive with sacctmgr's aliases (Share=Fairshare, Descr, Org, ParentName,
// MaxTRESPerJob, DefQOS, DefaultAcct ...). Every refusal names what is wrong and changes
// nothing: an unknown option, a bad value, an unknown account/user/QoS, an account with users
// or sub-accounts (delete), a QoS in use (delete), a user's default account (delete while
// others remain), a cycle in the tree.
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "ctld/accounts/assoc_db.h"

namespace tessera::ctld::accounts {

struct AssocRequest {
  std::string verb;    // add|create, modify|update, delete|remove, show|list
  std::string entity;  // account, user, qos, assoc|association
  std::vector<std::string> names;
  std::vector<std::pair<std::string, std::string>> where;  // conditions, keys as typed
  std::vector<std::pair<std::string, std::string>> set;    // settings (add: all key=value)
};

struct AssocOutcome {
  AssocDb next;
  std::string message;  // sacctmgr-like summary of what changes
};

// Canonical verb ("add", "modify", "delete", "show") and entity ("account", "user", "qos",
// "assoc"); InvalidArgument naming an unknown one.
Status NormalizeRequest(AssocRequest& r);
// The canonical form of a key: lower case, aliases folded ("share" -> "fairshare").
std::string CanonKey(const std::string& key);

// add / modify / delete. NotFound when nothing matches ("Nothing modified", "Nothing
// deleted"), AlreadyExists when add has nothing new ("Nothing new added").
Result<AssocOutcome> ApplyChange(const AssocDb& db, const AssocRequest& r);

// show: rows of (column, value), columns named as sacctmgr's headers ("Account", "Descr",
// "Def Acct", "Share", "GrpTRES", "MaxWall", "Def QOS" ...); every row of one entity has the
// same columns. Assoc rows come in tree order (root, then each account, its users, its
// sub-accounts).
using ShowRow = std::vector<std::pair<std::string, std::string>>;
Result<std::vector<ShowRow>> ShowRows(const AssocDb& db, const AssocRequest& r,
                                      const std::string& cluster);

// sacctmgr's time format for MaxWall: "[D-]HH:MM:SS", "" for none.
std::string FormatWall(int64_t seconds);

}  // namespace tessera::ctld::accounts
