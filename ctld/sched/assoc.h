#pragma once
// Associations as the scheduler reads them (issue 16 §1): lookups over SchedConfig's account
// tree and user associations, the submit-time checks of AccountingStorageEnforce=, and the
// effective per-job limits. Pure: no I/O, no clock.
//
// Inheritance (as Slurm's): a user association's Max* limit (MaxJobs, MaxSubmitJobs,
// MaxTRESPerJob item by item, MaxWall) that is unset takes its account's, else the nearest
// ancestor's that sets it. Grp* limits are not inherited: each account's Grp limits bound the
// jobs of that account and all its sub-accounts; a user association's Grp limits bound that
// user's jobs in that account. Allowed QoS: the user association's list, else the nearest
// account's up the tree that has one; empty everywhere = every QoS. Default QoS likewise.
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "ctld/sched/sched_config.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sched {

// Slurm's submit refusals (sbatch prints them after "Batch job submission failed: ").
inline constexpr const char* kInvalidAccount =
    "Invalid account or account/partition combination specified";
inline constexpr const char* kInvalidQos = "Invalid qos specification";
inline constexpr const char* kSubmitLimit =
    "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)";

// A read-only index over a SchedConfig's associations; `c` must outlive it.
class AssocIndex {
 public:
  explicit AssocIndex(const SchedConfig& c);
  const UserAssocConfig* Find(const std::string& user, const std::string& account) const;
  const AccountConfig* Account(const std::string& name) const;
  // The account a job without --account runs in: the user's DefaultAccount, else "".
  std::string DefaultAccount(const std::string& user) const;
  bool HasUser(const std::string& user) const;
  // Effective limits of (user, account): the user association's Max* with inheritance
  // (above); its Grp* as they are. Without a user association: the account's.
  AssocLimits Effective(const std::string& user, const std::string& account) const;
  std::vector<std::string> AllowedQos(const std::string& user, const std::string& account) const;
  std::string DefaultQos(const std::string& user, const std::string& account) const;
  // `account` and its ancestors, nearest first (at most 64; unknown names end the chain).
  std::vector<const AccountConfig*> Chain(const std::string& account) const;

 private:
  const SchedConfig& c_;
  std::unordered_map<std::string, const UserAssocConfig*> assocs_;  // user '\n' account
};

// AccountingStorageEnforce at submit (a job's empty account means the user's DefaultAccount):
//  associations: the account must exist and the user have an association with it, else
//    kInvalidAccount; qos: a QoS the association may not use is kInvalidQos; limits: the
//    user association's MaxSubmitJobs (pending + running of the user in the account) and the
//    GrpSubmitJobs of the association and each ancestor account (all users, sub-accounts
//    included), counting `current`, else kSubmitLimit naming the limit.
// OK when nothing is enforced.
// `idx`, when given, must index `c` (callers that submit often keep one per config).
Status CheckAssocSubmit(const JobSnap& job, const ClusterSnapshot& current, const SchedConfig& c,
                        const AssocIndex* idx = nullptr);

// Per-job association limits checked before placement (the limits plugin): MaxWall
// ("AssocMaxWallDurationPerJobLimit") and MaxTRESPerJob ("AssocMaxCpuPerJobLimit",
// "AssocMaxGRESPerJob", "AssocMaxMemPerJob", "AssocMaxNodePerJobLimit"). "" = within.
std::string AssocPerJobReason(const AssocLimits& eff, int64_t time_limit, int64_t cpus,
                              int64_t mem_mib, int64_t gpus, int64_t nodes);

}  // namespace tessera::sched
