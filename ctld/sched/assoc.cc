#include "ctld/sched/assoc.h"

#include <algorithm>
#include <optional>

namespace tessera::sched {
namespace {

std::string Key(const std::string& user, const std::string& account) {
  return user + '\n' + account;
}

void Inherit(int64_t& mine, int64_t theirs) {
  if (mine < 0) mine = theirs;
}

void InheritTres(TresLimit& mine, const TresLimit& theirs) {
  Inherit(mine.cpu, theirs.cpu);
  Inherit(mine.mem_mib, theirs.mem_mib);
  Inherit(mine.gpu, theirs.gpu);
  Inherit(mine.node, theirs.node);
}

}  // namespace

AssocIndex::AssocIndex(const SchedConfig& c) : c_(c) {
  assocs_.reserve(c.user_assocs.size());
  for (const auto& u : c.user_assocs) assocs_[Key(u.user, u.account)] = &u;
}

const UserAssocConfig* AssocIndex::Find(const std::string& user, const std::string& account) const {
  auto it = assocs_.find(Key(user, account));
  return it == assocs_.end() ? nullptr : it->second;
}

const AccountConfig* AssocIndex::Account(const std::string& name) const {
  auto it = c_.accounts.find(name);
  return it == c_.accounts.end() ? nullptr : &it->second;
}

std::string AssocIndex::DefaultAccount(const std::string& user) const {
  auto it = c_.default_account.find(user);
  return it == c_.default_account.end() ? "" : it->second;
}

bool AssocIndex::HasUser(const std::string& user) const {
  return c_.default_account.count(user) > 0;
}

std::vector<const AccountConfig*> AssocIndex::Chain(const std::string& account) const {
  std::vector<const AccountConfig*> out;
  std::string a = account;
  while (!a.empty() && out.size() < 64) {
    const AccountConfig* ac = Account(a);
    if (!ac) break;
    out.push_back(ac);
    a = ac->parent;
  }
  return out;
}

AssocLimits AssocIndex::Effective(const std::string& user, const std::string& account) const {
  AssocLimits l;
  if (const UserAssocConfig* u = Find(user, account)) l = u->limits;
  for (const AccountConfig* a : Chain(account)) {
    Inherit(l.max_jobs, a->limits.max_jobs);
    Inherit(l.max_submit_jobs, a->limits.max_submit_jobs);
    Inherit(l.max_wall, a->limits.max_wall);
    InheritTres(l.max_tres_per_job, a->limits.max_tres_per_job);
  }
  return l;
}

std::vector<std::string> AssocIndex::AllowedQos(const std::string& user,
                                                const std::string& account) const {
  if (const UserAssocConfig* u = Find(user, account); u && !u->qos.empty()) return u->qos;
  for (const AccountConfig* a : Chain(account))
    if (!a->qos.empty()) return a->qos;
  return {};
}

std::string AssocIndex::DefaultQos(const std::string& user, const std::string& account) const {
  if (const UserAssocConfig* u = Find(user, account); u && !u->default_qos.empty())
    return u->default_qos;
  for (const AccountConfig* a : Chain(account))
    if (!a->default_qos.empty()) return a->default_qos;
  return "";
}

namespace {

// MaxSubmitJobs / GrpSubmitJobs over `current` (+1 for the job itself).
Status CheckSubmitCounts(const JobSnap& job, const std::string& account, const AssocIndex& idx,
                         const ClusterSnapshot& current) {
  AssocLimits eff = idx.Effective(job.user, account);
  std::vector<const AccountConfig*> chain = idx.Chain(account);
  bool grp = std::any_of(chain.begin(), chain.end(),
                         [](const AccountConfig* a) { return a->limits.grp_submit_jobs >= 0; });
  if (eff.max_submit_jobs < 0 && eff.grp_submit_jobs < 0 && !grp) return Status::Ok();
  // Jobs per account (for Grp) and the user's in `account` (for Max and the user's Grp).
  std::unordered_map<std::string, int64_t> per_account;
  int64_t mine = 0;
  auto count = [&](const std::string& user, const std::string& acct_in) {
    std::string acct = acct_in.empty() ? idx.DefaultAccount(user) : acct_in;
    if (user == job.user && acct == account) ++mine;
    for (const AccountConfig* a : idx.Chain(acct)) ++per_account[a->name];
  };
  for (const auto& p : current.pending) count(p.user, p.account);
  for (const auto& r : current.running) count(r.user, r.account);
  auto refuse = [&](const std::string& what, int64_t have, int64_t limit) {
    return ResourceExhausted(std::string(kSubmitLimit) + ": " + what + " (" +
                             std::to_string(have) + " jobs, limit " + std::to_string(limit) + ")");
  };
  if (eff.max_submit_jobs >= 0 && mine + 1 > eff.max_submit_jobs)
    return refuse("MaxSubmitJobs of user " + job.user + " in account " + account, mine,
                  eff.max_submit_jobs);
  if (eff.grp_submit_jobs >= 0 && mine + 1 > eff.grp_submit_jobs)
    return refuse("GrpSubmitJobs of user " + job.user + " in account " + account, mine,
                  eff.grp_submit_jobs);
  for (const AccountConfig* a : chain) {
    int64_t have = per_account[a->name];
    if (a->limits.grp_submit_jobs >= 0 && have + 1 > a->limits.grp_submit_jobs)
      return refuse("GrpSubmitJobs of account " + a->name, have, a->limits.grp_submit_jobs);
  }
  return Status::Ok();
}

}  // namespace

Status CheckAssocSubmit(const JobSnap& job, const ClusterSnapshot& current, const SchedConfig& c,
                        const AssocIndex* given) {
  if (!c.enforce_associations) return Status::Ok();
  std::optional<AssocIndex> own;
  const AssocIndex& idx = given ? *given : own.emplace(c);
  std::string account = job.account.empty() ? idx.DefaultAccount(job.user) : job.account;
  if (account.empty() || !idx.Account(account) || !idx.Find(job.user, account))
    return InvalidArgument(kInvalidAccount);
  if (c.enforce_qos) {
    std::string qos = job.qos.empty() ? idx.DefaultQos(job.user, account) : job.qos;
    if (qos.empty()) qos = c.default_qos;
    std::vector<std::string> allowed = idx.AllowedQos(job.user, account);
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), qos) == allowed.end())
      return InvalidArgument(kInvalidQos);
  }
  if (c.enforce_limits) return CheckSubmitCounts(job, account, idx, current);
  return Status::Ok();
}

std::string AssocPerJobReason(const AssocLimits& eff, int64_t time_limit, int64_t cpus,
                              int64_t mem_mib, int64_t gpus, int64_t nodes) {
  if (eff.max_wall > 0 && time_limit > eff.max_wall) return "AssocMaxWallDurationPerJobLimit";
  const TresLimit& t = eff.max_tres_per_job;
  if (t.gpu >= 0 && gpus > t.gpu) return "AssocMaxGRESPerJob";
  if (t.cpu >= 0 && cpus > t.cpu) return "AssocMaxCpuPerJobLimit";
  if (t.mem_mib >= 0 && mem_mib > t.mem_mib) return "AssocMaxMemPerJob";
  if (t.node >= 0 && nodes > t.node) return "AssocMaxNodePerJobLimit";
  return "";
}

}  // namespace tessera::sched
