// The controller's side of the association store (issue 16 §1): start-up import, reconfigure,
// tacctmgr changes and the defaults a submission takes from its association.
#include <algorithm>

#include "ctld/controller.h"
#include "ctld/log.h"
#include "ctld/sched/assoc.h"

namespace tessera::ctld {

Status Controller::StartAccounts(const Recovered& rec) {
  base_sched_cfg_ = sched_cfg_;
  accounts_ = std::make_unique<accounts::AssocManager>(store_);
  std::vector<std::string> notes;
  Status st = accounts_->Start(rec, *base_sched_cfg_, &notes);
  for (const auto& n : notes) Log("associations: " + n);
  if (!st.ok()) return st;
  sched_cfg_ = accounts_->Live(*base_sched_cfg_);
  const accounts::AssocDb& db = accounts_->db();
  Log("association store: " + std::to_string(db.accounts.size()) + " accounts, " +
      std::to_string(db.users.size()) + " users, " + std::to_string(db.assocs.size()) +
      " user associations, " + std::to_string(db.qos.size()) + " QOS");
  return Status::Ok();
}

void Controller::ApplyAccounts() {
  base_sched_cfg_ = sched_cfg_;
  if (!accounts_) return;  // before Start
  std::vector<std::string> notes;
  Status st = accounts_->MergeConfig(*base_sched_cfg_, &notes);
  for (const auto& n : notes) Log("associations: " + n);
  if (!st.ok())
    Log("reconfigure: associations of the new configuration not imported: " + st.message());
  sched_cfg_ = accounts_->Live(*base_sched_cfg_);
}

Result<accounts::AssocManager::Changed> Controller::ChangeAssoc(const accounts::AssocRequest& r,
                                                                bool dry_run) {
  if (!accounts_) return Unavailable("the association store is not loaded yet");
  auto c = accounts_->Change(r, dry_run);
  if (!c.ok() || dry_run || c->rows == 0) return c;
  sched_cfg_ = accounts_->Live(*base_sched_cfg_);
  RequestSchedule();  // a limit may have been lifted
  return c;
}

Result<std::vector<accounts::ShowRow>> Controller::ShowAssoc(
    const accounts::AssocRequest& r) const {
  if (!accounts_) return Unavailable("the association store is not loaded yet");
  return accounts_->Show(r, cfg_->cluster_name);
}

Controller::LiveAssocs::LiveAssocs(std::shared_ptr<const sched::SchedConfig> c)
    : cfg(std::move(c)), idx(*cfg) {
  auto set = [](const sched::AssocLimits& l) {
    return l.max_submit_jobs >= 0 || l.grp_submit_jobs >= 0;
  };
  submit_limits = cfg->enforce_limits &&
                  (std::any_of(cfg->accounts.begin(), cfg->accounts.end(),
                               [&](const auto& a) { return set(a.second.limits); }) ||
                   std::any_of(cfg->user_assocs.begin(), cfg->user_assocs.end(),
                               [&](const auto& u) { return set(u.limits); }));
}

const Controller::LiveAssocs& Controller::Assocs() const {
  if (!assocs_ || assocs_->cfg != sched_cfg_) assocs_ = std::make_unique<LiveAssocs>(sched_cfg_);
  return *assocs_;
}

void Controller::ApplyAssocDefaults(JobRecord& r, bool time_given) const {
  const sched::SchedConfig& c = *sched_cfg_;
  if (c.default_account.empty()) return;
  const sched::AssocIndex& idx = Assocs().idx;
  if (r.spec.account.empty()) r.spec.account = idx.DefaultAccount(r.user);
  if (r.spec.account.empty()) return;
  if (r.spec.qos.empty()) r.spec.qos = idx.DefaultQos(r.user, r.spec.account);
  int64_t wall = c.enforce_limits ? idx.Effective(r.user, r.spec.account).max_wall : -1;
  if (!time_given && wall > 0 && (r.time_limit_s < 0 || r.time_limit_s > wall))
    r.time_limit_s = wall;  // Slurm: a job without --time gets the association's MaxWall
}

bool Controller::AssocSubmitLimits() const { return Assocs().submit_limits; }

}  // namespace tessera::ctld
