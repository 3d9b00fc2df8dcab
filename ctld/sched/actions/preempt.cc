// The preempt action (issue 16 §4; settings in preempt_config.h). Runs after allocate. For each
// eligible pending job that did not start (reason Resources or Priority) and may preempt
// (PreemptType=preempt/qos: its QoS's Preempt= list names the victim's QoS;
// preempt/partition_prio: its partition's PriorityTier is above the victim's), in job order, at
// most `preempt_depth` such searches per cycle:
//  1. Candidates: running jobs it may preempt, whose mode is not OFF, past their
//     PreemptExemptTime, preemptable, not already being preempted, and holding a node of its
//     partition. Ordered cheapest first: (partition_prio: lower tier), lower QoS Priority, lower
//     priority, later start (least run time lost), higher id.
//  2. Jobs already being preempted for it (RunningSnap::preempted_for, still ending) are released
//     first; if it then fits, nothing new is preempted.
//  3. If it does not fit even with every candidate released: nothing is preempted. (Only the
//     kMaxCandidates cheapest are considered, so a search costs a bounded number of releases.)
//  4. Fewest: the cheapest single candidate that suffices (among the first kSingleTries), else
//     the shortest cheapest prefix that suffices (binary search); then every victim not needed
//     is dropped, most expensive first (no over-eviction).
//  5. The preemptor's place is held now (it waits, reason Resources, expected_start now,
//     reserved_nodes) and the rest of the victims' resources stay held until they end, so
//     nothing else in this cycle takes them. Victims are whole jobs: every node is released.
// Output: CycleResult::preemptions (decision.h).
// Under a victim policy (victim_policy.h; issue 16 §2) the same machinery is the `reclaim`
// action: the policy decides who searches (Wants) and admits candidates (Admit) instead of the
// QoS/partition rights; PreemptType does not matter then; Preemption::cause names the policy.
#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "ctld/sched/placement.h"
#include "ctld/sched/registry.h"
#include "ctld/sched/session.h"
#include "ctld/sched/actions/victim_policy.h"
#include "ctld/sched/victim_release.h"

namespace tessera::sched {
namespace {

constexpr size_t kSingleTries = 32;
constexpr size_t kMaxCandidates = 512;  // the cheapest considered per preemptor

struct Cand {
  const RunningSnap* r;
  std::string mode;
  int64_t grace;
  size_t runner;  // index into PreemptAction::runners_
};

// A running job that may be a victim whoever the preemptor (preemptable, not being preempted,
// past its exempt time, mode not OFF), with what the searches ask of it, computed once per cycle.
struct Runner {
  const RunningSnap* r;
  const QosConfig* qos;                // null: unknown QoS
  uint32_t tier;                       // its partition's PriorityTier
  PreemptModeKind mode;
  int64_t grace;
  std::vector<uint32_t> partitions;    // of its usable nodes, sorted, unique
  std::array<int64_t, 5> key;          // cheapest first (see the header comment)
  bool taken = false;                  // chosen as a victim in this cycle (taken_)
};

class PreemptAction : public Action {
 public:
  PreemptAction() = default;
  // issue 16 §2 (h16q): the same machinery under a victim policy (reclaim).
  explicit PreemptAction(std::unique_ptr<VictimPolicy> p) : policy_(std::move(p)) {}
  std::string Name() const override { return policy_ ? policy_->ActionName() : "preempt"; }
  void Execute(Session& s) override;

 private:
  const QosConfig* QosOf(const std::string& q) const { return cfg_->FindQos(q); }
  uint32_t Tier(const std::string& partition) const {
    int id = s_->state().PartitionId(partition);
    return id < 0 ? 0 : s_->state().Partition(id).priority_tier;
  }
  PreemptModeKind ModeOf(const RunningSnap& r) const;
  int64_t GraceOf(const RunningSnap& r) const;
  bool Exempt(const RunningSnap& r) const;
  bool MayPreemptAny(const JobInfo& j) const;
  void Prepare();
  std::vector<Cand> Candidates(const JobInfo& j);
  bool Fits(JobInfo& j, VictimRelease& rel) {
    rel.Publish();
    return PlaceNow(*s_, j, false, nullptr);
  }
  std::vector<size_t> Choose(JobInfo& j, const std::vector<Cand>& c, VictimRelease& rel);
  void Serve(JobInfo& j, const std::vector<const RunningSnap*>& inflight);

  Session* s_ = nullptr;
  const SchedConfig* cfg_ = nullptr;
  std::map<uint64_t, std::vector<const RunningSnap*>> inflight_;  // preemptor -> victims
  std::set<uint64_t> taken_;  // victims chosen in this cycle
  uint32_t budget_ = 0;       // candidate searches left in this cycle
  uint32_t min_tier_ = 0;     // the lowest partition PriorityTier
  std::vector<Runner> runners_;  // Prepare: possible victims, cheapest first
  bool prepared_ = false;
  std::unique_ptr<VictimPolicy> policy_;  // null = PreemptType's rules
};

PreemptModeKind PreemptAction::ModeOf(const RunningSnap& r) const {
  const QosConfig* q = QosOf(r.qos);
  if ((cfg_->preempt_type == PreemptType::kQos || policy_) && q &&
      q->preempt_mode != PreemptModeKind::kUnset)
    return q->preempt_mode;
  auto it = cfg_->partition_preempt.find(r.partition);
  if (it != cfg_->partition_preempt.end() && it->second.mode != PreemptModeKind::kUnset)
    return it->second.mode;
  return cfg_->preempt_mode.kind == PreemptModeKind::kUnset ? PreemptModeKind::kCancel
                                                            : cfg_->preempt_mode.kind;
}

int64_t PreemptAction::GraceOf(const RunningSnap& r) const {
  const QosConfig* q = QosOf(r.qos);
  if (q && q->grace_time > 0) return q->grace_time;
  auto it = cfg_->partition_preempt.find(r.partition);
  return it == cfg_->partition_preempt.end() ? 0 : it->second.grace_time;
}

bool PreemptAction::Exempt(const RunningSnap& r) const {
  const QosConfig* q = QosOf(r.qos);
  int64_t t = q && q->preempt_exempt_time >= 0 ? q->preempt_exempt_time : cfg_->preempt_exempt_time;
  return t > 0 && s_->now() - r.start_time < t;
}

bool PreemptAction::MayPreemptAny(const JobInfo& j) const {
  if (cfg_->preempt_type == PreemptType::kQos) {
    const QosConfig* q = QosOf(j.snap->qos);
    return q && !q->preempt.empty();
  }
  return j.partition >= 0 && s_->state().Partition(j.partition).priority_tier > min_tier_;
}

void PreemptAction::Prepare() {
  prepared_ = true;
  for (const auto& r : s_->snapshot().running) {
    if (!r.preemptable || r.preempted_for || Exempt(r)) continue;
    PreemptModeKind m = ModeOf(r);
    if (m == PreemptModeKind::kOff || m == PreemptModeKind::kUnset) continue;
    Runner x{&r, QosOf(r.qos), Tier(r.partition), m, GraceOf(r), {}, {}};
    for (const auto& u : r.nodes) {
      const NodeRt* n = s_->state().FindNode(u.node);
      if (n && n->usable) x.partitions.insert(x.partitions.end(), n->partitions.begin(), n->partitions.end());
    }
    std::sort(x.partitions.begin(), x.partitions.end());
    x.partitions.erase(std::unique(x.partitions.begin(), x.partitions.end()), x.partitions.end());
    x.key = {cfg_->preempt_type == PreemptType::kPartitionPrio ? int64_t{x.tier} : 0,
             x.qos ? x.qos->priority : 0, r.priority, -r.start_time, -static_cast<int64_t>(r.id)};
    runners_.push_back(std::move(x));
  }
  std::sort(runners_.begin(), runners_.end(),
            [](const Runner& a, const Runner& b) { return a.key < b.key; });
  for (auto& x : runners_) x.taken = taken_.count(x.r->id) > 0;
}

// The cheapest kMaxCandidates running jobs `j` may preempt (under a policy: that it admits,
// asked in cost order), cheapest first.
std::vector<Cand> PreemptAction::Candidates(const JobInfo& j) {
  if (!prepared_) Prepare();
  const QosConfig* jq = policy_ ? nullptr : QosOf(j.snap->qos);
  uint32_t jtier = j.partition >= 0 ? s_->state().Partition(j.partition).priority_tier : 0;
  if (policy_) policy_->StartSearch(j);
  std::vector<Cand> out;
  for (size_t i = 0; i < runners_.size() && out.size() < kMaxCandidates; ++i) {
    const Runner& x = runners_[i];
    if (x.taken) continue;
    if (!policy_) {  // PreemptType's rights
      if (cfg_->preempt_type == PreemptType::kQos) {
        if (!jq || !x.qos ||
            std::find(jq->preempt.begin(), jq->preempt.end(), x.qos->name) == jq->preempt.end())
          continue;
      } else if (jtier <= x.tier) {
        continue;
      }
    }
    if (j.partition < 0 ||
        !std::binary_search(x.partitions.begin(), x.partitions.end(), static_cast<uint32_t>(j.partition)))
      continue;
    if (policy_ && !policy_->Admit(*x.r)) continue;  // admitted in cost order
    out.push_back({x.r, PreemptModeName(x.mode), x.grace, i});
  }
  return out;
}

// The chosen candidates (indices into c), or none. `rel` holds the in-flight releases.
std::vector<size_t> PreemptAction::Choose(JobInfo& j, const std::vector<Cand>& c,
                                          VictimRelease& rel) {
  size_t base = rel.Mark();
  auto with = [&](const std::vector<size_t>& set) {
    rel.UndoTo(base);
    for (size_t i : set) rel.Release(*c[i].r);
    bool ok = Fits(j, rel);
    rel.UndoTo(base);
    return ok;
  };
  std::vector<size_t> all(c.size());
  for (size_t i = 0; i < c.size(); ++i) all[i] = i;
  if (c.empty() || !with(all)) return {};  // even every candidate would not make room
  for (size_t i = 0; i < std::min(c.size(), kSingleTries); ++i)
    if (with({i})) return {i};
  size_t lo = 1, hi = c.size();  // the shortest prefix that fits: prefix hi fits
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (with(std::vector<size_t>(all.begin(), all.begin() + static_cast<long>(mid)))) hi = mid;
    else lo = mid + 1;
  }
  std::vector<size_t> chosen(all.begin(), all.begin() + static_cast<long>(hi));
  for (size_t k = chosen.size(); k-- > 0;) {  // drop victims not needed, most expensive first
    std::vector<size_t> less = chosen;
    less.erase(less.begin() + static_cast<long>(k));
    if (!less.empty() && with(less)) chosen = std::move(less);
  }
  return chosen;
}

void PreemptAction::Serve(JobInfo& j, const std::vector<const RunningSnap*>& inflight) {
  VictimRelease rel(s_->state());
  for (const RunningSnap* r : inflight) rel.Release(*r);
  Preemption p;
  p.preemptor = j.snap->id;
  if (policy_) p.cause = policy_->ActionName();
  for (const RunningSnap* r : inflight) p.pending_victims.push_back(r->id);
  std::vector<const RunningSnap*> victims = inflight;
  if (inflight.empty() || !Fits(j, rel)) {
    if (budget_ == 0) return;
    --budget_;
    std::vector<Cand> c = Candidates(j);
    std::vector<size_t> chosen = Choose(j, c, rel);
    if (chosen.empty()) return;  // no room even with every candidate: nobody is preempted
    for (size_t i : chosen) {
      rel.Release(*c[i].r);
      victims.push_back(c[i].r);
      taken_.insert(c[i].r->id);
      runners_[c[i].runner].taken = true;
      p.victims.push_back({c[i].r->id, c[i].mode, c[i].grace});
    }
  }
  rel.Publish();
  if (!PlaceNow(*s_, j, true, &p.placement)) return;  // (cannot happen: it fitted above)
  rel.Keep();
  for (const RunningSnap* r : victims) rel.Occupy(*r);  // the rest stays theirs until they end
  rel.Keep();
  if (policy_) policy_->Chosen(j, std::vector<const RunningSnap*>(victims.begin() + long(inflight.size()), victims.end()));
  j.stage = JobInfo::Stage::kReserved;
  j.reason = "Resources";
  Decision& d = s_->decision(j);
  d.expected_start = s_->now();
  d.reserved_nodes.clear();
  for (const auto& pl : p.placement) d.reserved_nodes.push_back(pl.node);
  s_->result().preemptions.push_back(std::move(p));
}

void PreemptAction::Execute(Session& s) {
  s_ = &s;
  cfg_ = &s.config();
  if (cfg_->preempt_type == PreemptType::kNone && !policy_) return;
  for (const auto& p : s.result().preemptions)  // victims an earlier action (reclaim) chose
    for (const auto& v : p.victims) taken_.insert(v.job_id);
  if (policy_) policy_->Begin(s);
  budget_ = cfg_->preempt_depth;
  min_tier_ = ~0u;
  for (size_t i = 0; i < s.state().PartitionCount(); ++i)
    min_tier_ = std::min(min_tier_, s.state().Partition(static_cast<int>(i)).priority_tier);
  for (const auto& r : s.snapshot().running)
    if (r.preempted_for) inflight_[r.preempted_for].push_back(&r);
  // In job order. Whether a job may search is judged lazily but as of the cycle's start
  // (VictimPolicy::Wants), so the same jobs are served as when every job was judged first; once
  // the searches are spent only jobs with victims in flight are left to serve.
  for (JobInfo* j : s.OrderedEligible()) {
    // "Topology": a job TopologyMode=required keeps from spreading (issue 15) may preempt too.
    if (j->reason != "Resources" && j->reason != "Priority" && j->reason != "Topology") continue;
    auto it = inflight_.find(j->snap->id);
    if (it == inflight_.end() &&
        (budget_ == 0 || !(policy_ ? policy_->Wants(*j) : MayPreemptAny(*j))))
      continue;
    if (!s.Allocatable(*j).empty()) continue;
    Serve(*j, it == inflight_.end() ? std::vector<const RunningSnap*>{} : it->second);
  }
}

}  // namespace

void RegisterPreemptAction(Registry& r) {
  r.AddAction("preempt", [](const SchedConfig&) -> Result<std::unique_ptr<Action>> {
    return std::unique_ptr<Action>(new PreemptAction());
  });
  r.AddAction("reclaim", [](const SchedConfig& c) -> Result<std::unique_ptr<Action>> {  // §2
    return std::unique_ptr<Action>(new PreemptAction(MakeReclaimPolicy(c)));
  });
}

}  // namespace tessera::sched
