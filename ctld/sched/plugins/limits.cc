// limits: partition state/MaxTime/MaxNodes, QoS MaxWall, per-user running jobs and TRES, QoS
// GrpTRES/GrpJobs and account GrpTRES/GrpJobs (an account's usage counts toward its parents);
// with AccountingStorageEnforce=limits also the association limits (assoc.h): MaxWall and
// MaxTRESPerJob per job, MaxJobs and the user association's GrpJobs/GrpTRES per user and account.
#include <memory>
#include <unordered_map>
#include <vector>

#include "ctld/sched/assoc.h"

#include "ctld/sched/plugins/plugins.h"
#include "ctld/sched/session.h"

namespace tessera::sched {
namespace {

struct Usage {
  int64_t cpu = 0, mem = 0, gpu = 0, node = 0, jobs = 0;
  void Add(const Usage& o) { cpu += o.cpu, mem += o.mem, gpu += o.gpu, node += o.node, jobs += o.jobs; }
};

// The first TRES of `lim` that `have + add` would exceed, as a reason with `prefix`
// ("QOSMax..PerUser", "QOSGrp", "AssocGrp"), or "".
std::string Exceeds(const TresLimit& lim, const Usage& have, const Usage& add, bool per_user,
                    const std::string& prefix) {
  auto over = [](int64_t limit, int64_t a, int64_t b) { return limit >= 0 && a + b > limit; };
  if (over(lim.gpu, have.gpu, add.gpu)) return prefix + (per_user ? "GRESPerUser" : "GRES");
  if (over(lim.cpu, have.cpu, add.cpu)) return prefix + (per_user ? "CpuPerUserLimit" : "CpuLimit");
  if (over(lim.mem_mib, have.mem, add.mem)) return prefix + (per_user ? "MemoryPerUser" : "MemLimit");
  if (over(lim.node, have.node, add.node)) return prefix + (per_user ? "NodePerUserLimit" : "NodeLimit");
  return "";
}

class LimitsPlugin : public Plugin {
  struct AssocView;  // below

 public:
  explicit LimitsPlugin(const SchedConfig& c) : cfg_(c) {}
  std::string Name() const override { return "limits"; }

  void OnSessionOpen(Session& s) override {
    if (cfg_.enforce_limits) {
      assoc_ = std::make_unique<AssocIndex>(cfg_);
      job_views_.assign(s.snapshot().pending.size(), nullptr);
    }
    for (const auto& r : s.snapshot().running) {
      Usage u{0, 0, 0, static_cast<int64_t>(r.nodes.size()), 1};
      for (const auto& n : r.nodes) u.cpu += n.cpus, u.mem += static_cast<int64_t>(n.mem_mib), u.gpu += n.gpus;
      Charge(r.user, r.qos, r.account, u);
    }
    Session* sp = &s;
    s.AddEligible([this, sp](const JobInfo& j) { return Static(*sp, j); });
    s.AddAllocatable([this](const JobInfo& j) { return Dynamic(j); });
    s.AddOnAllocated([this](const JobInfo& j, const std::vector<NodePlacement>& p) {
      Usage u{0, 0, 0, static_cast<int64_t>(p.size()), 1};
      for (const auto& n : p) u.cpu += n.cpus, u.mem += static_cast<int64_t>(n.mem_mib), u.gpu += static_cast<int64_t>(n.gpu_indices.size() + n.mig_uuids.size());
      Charge(j.snap->user, j.snap->qos, j.snap->account, u, assoc_ ? &JobView(j) : nullptr);
    });
  }

 private:
  std::string QosName(const std::string& q) const { return q.empty() ? cfg_.default_qos : q; }

  void Charge(const std::string& user, const std::string& qos, const std::string& account,
              const Usage& u, AssocView* view = nullptr) {
    std::string q = QosName(qos);
    if (assoc_) (view ? *view : ViewFor(user, account)).used.Add(u);
    per_user_[user + '\n' + q].Add(u);
    per_qos_[q].Add(u);
    std::string a = AccountOf(user, account);
    for (int depth = 0; !a.empty() && depth < 64; ++depth) {
      per_account_[a].Add(u);
      auto it = cfg_.accounts.find(a);
      a = it == cfg_.accounts.end() ? "" : it->second.parent;
    }
  }

  std::string Static(Session& s, const JobInfo& j) const {
    const PartitionSnap& p = s.state().Partition(j.partition);
    const JobSnap& js = *j.snap;
    if (!p.up) return "PartitionDown";
    if (p.max_time > 0 && js.time_limit > p.max_time) return "PartitionTimeLimit";
    if (p.max_nodes && js.nodes_min > p.max_nodes) return "PartitionNodeLimit";
    if (assoc_) {
      std::string r = AssocPerJobReason(JobView(j).eff, j.time_limit, j.total.cpus, j.total.mem,
                                        j.total.gpus, std::max<int64_t>(1, js.nodes_min));
      if (!r.empty()) return r;
    }
    if (cfg_.qos.empty()) return "";
    const QosConfig* q = cfg_.FindQos(js.qos);
    if (!q) return js.qos.empty() ? "" : "InvalidQOS";
    if (q->max_wall > 0 && j.time_limit > q->max_wall) return "QOSMaxWallDurationPerJobLimit";
    return "";
  }

  std::string Dynamic(const JobInfo& j) const {
    const JobSnap& js = *j.snap;
    Usage add{j.total.cpus, j.total.mem, j.total.gpus, std::max<int64_t>(1, js.nodes_min), 1};
    static const Usage kZero;
    auto get = [](const std::unordered_map<std::string, Usage>& m, const std::string& k) -> const Usage& {
      auto it = m.find(k);
      return it == m.end() ? kZero : it->second;
    };
    if (const QosConfig* q = cfg_.FindQos(js.qos)) {
      const Usage& mine = get(per_user_, js.user + '\n' + q->name);
      if (q->max_jobs_per_user >= 0 && mine.jobs + 1 > q->max_jobs_per_user) return "QOSMaxJobsPerUserLimit";
      std::string r = Exceeds(q->max_tres_per_user, mine, add, true, "QOSMax");
      if (!r.empty()) return r;
      const Usage& all = get(per_qos_, q->name);
      if (q->grp_jobs >= 0 && all.jobs + 1 > q->grp_jobs) return "QOSGrpJobsLimit";
      if (!(r = Exceeds(q->grp_tres, all, add, false, "QOSGrp")).empty()) return r;
    }
    if (assoc_) {
      std::string r = UserAssocReason(JobView(j), add);
      if (!r.empty()) return r;
    }
    std::string a = AccountOf(js.user, js.account);
    for (int depth = 0; !a.empty() && depth < 64; ++depth) {
      auto it = cfg_.accounts.find(a);
      if (it == cfg_.accounts.end()) break;
      const Usage& used = get(per_account_, a);
      if (it->second.grp_jobs >= 0 && used.jobs + 1 > it->second.grp_jobs) return "AssocGrpJobsLimit";
      std::string r = Exceeds(it->second.grp_tres, used, add, false, "AssocGrp");
      if (!r.empty()) return r;
      a = it->second.parent;
    }
    return "";
  }

  // The job's account: its own, else the user's DefaultAccount (association limits only).
  std::string AccountOf(const std::string& user, const std::string& account) const {
    return account.empty() && assoc_ ? assoc_->DefaultAccount(user) : account;
  }

  // One (user, account) association in this session: its effective limits (inheritance
  // resolved once) and the running usage charged to it.
  struct AssocView {
    AssocLimits eff;
    bool has_assoc = false;
    Usage used;
  };

  AssocView& ViewFor(const std::string& user, const std::string& account) const {
    std::string acct = AccountOf(user, account);
    auto [it, fresh] = views_.try_emplace(user + '\n' + acct);
    if (fresh) {
      it->second.eff = assoc_->Effective(user, acct);
      it->second.has_assoc = assoc_->Find(user, acct) != nullptr;
    }
    return it->second;
  }

  // The job's view, looked up once per job (views_ nodes never move).
  AssocView& JobView(const JobInfo& j) const {
    if (j.idx >= job_views_.size()) return ViewFor(j.snap->user, j.snap->account);
    AssocView*& v = job_views_[j.idx];
    if (!v) v = &ViewFor(j.snap->user, j.snap->account);
    return *v;
  }

  // MaxJobs (running jobs of the user in the account, inherited) and the user association's
  // own GrpJobs/GrpTRES.
  std::string UserAssocReason(const AssocView& v, const Usage& add) const {
    if (v.eff.max_jobs >= 0 && v.used.jobs + 1 > v.eff.max_jobs) return "AssocMaxJobsLimit";
    if (!v.has_assoc) return "";
    if (v.eff.grp_jobs >= 0 && v.used.jobs + 1 > v.eff.grp_jobs) return "AssocGrpJobsLimit";
    return Exceeds(v.eff.grp_tres, v.used, add, false, "AssocGrp");
  }

  const SchedConfig& cfg_;
  std::unique_ptr<AssocIndex> assoc_;  // with AccountingStorageEnforce=limits
  std::unordered_map<std::string, Usage> per_user_, per_qos_, per_account_;
  mutable std::unordered_map<std::string, AssocView> views_;  // user '\n' account
  mutable std::vector<AssocView*> job_views_;                  // by JobInfo::idx
};

}  // namespace

void RegisterLimitsPlugin(Registry& r) { r.AddPlugin("limits", Simple<LimitsPlugin>()); }

}  // namespace tessera::sched
