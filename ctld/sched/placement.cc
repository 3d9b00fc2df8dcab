#include "ctld/sched/placement.h"

#include <algorithm>
#include <deque>
#include <map>

#include "ctld/sched/gpu_mem.h"
#include "ctld/sched/gpu_share.h"
#include "ctld/sched/statement.h"
#include "ctld/sched/topology_place.h"

namespace tessera::sched {
namespace {

const std::string& GroupModel(const GroupReq& g) {
  return g.per_task.gpu_model.empty() ? g.per_node.gpu_model : g.per_task.gpu_model;
}

// Memory per task when the job names none: a share proportional to its CPUs.
int64_t TaskMem(const GroupReq& g, const NodeSnap& n) {
  if (g.per_task.mem_mib || g.per_node.mem_mib) return static_cast<int64_t>(g.per_task.mem_mib);
  uint32_t cpus = std::max<uint32_t>(1, g.per_task.cpus);
  return n.cpus_total ? static_cast<int64_t>(n.mem_total * cpus / n.cpus_total) : 0;
}

int64_t Capacity(const Amount& avail, const GroupReq& g, const NodeSnap& n) {
  int64_t cpus = avail.cpus - g.per_node.cpus;
  int64_t mem = avail.mem - static_cast<int64_t>(g.per_node.mem_mib);
  int64_t gpus = avail.gpus - g.per_node.gpus;
  if (cpus < 0 || mem < 0 || gpus < 0) return 0;
  int64_t cap = cpus / std::max<uint32_t>(1, g.per_task.cpus);
  if (int64_t tm = TaskMem(g, n)) cap = std::min(cap, mem / tm);
  if (g.per_task.gpus) cap = std::min<int64_t>(cap, gpus / g.per_task.gpus);
  if (g.tasks_per_node) cap = std::min<int64_t>(cap, g.tasks_per_node);
  return cap;
}

Amount AmountFor(const GroupReq& g, const NodeSnap& n, int64_t k) {
  return {int64_t{std::max<uint32_t>(1, g.per_task.cpus)} * k + g.per_node.cpus,
          TaskMem(g, n) * k + static_cast<int64_t>(g.per_node.mem_mib),
          int64_t{g.per_task.gpus} * k + g.per_node.gpus};
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool InPartition(const NodeRt& n, int partition) {
  return std::find(n.partitions.begin(), n.partitions.end(), static_cast<uint32_t>(partition)) !=
         n.partitions.end();
}

// node -> index in Placer::out_: a sorted vector (a placement uses few nodes; no allocation per
// node as a std::map would make).
class UsedNodes {
 public:
  size_t size() const { return v_.size(); }
  bool empty() const { return v_.empty(); }
  size_t count(uint32_t node) const { return Find(node) != v_.end(); }
  // The index of `node` in out_, or -1.
  long Index(uint32_t node) const {
    auto it = Find(node);
    return it == v_.end() ? -1 : static_cast<long>(it->second);
  }
  void Add(uint32_t node, size_t index) {
    v_.insert(std::lower_bound(v_.begin(), v_.end(), std::make_pair(node, size_t{0})), {node, index});
  }

 private:
  std::vector<std::pair<uint32_t, size_t>>::const_iterator Find(uint32_t node) const {
    auto it = std::lower_bound(v_.begin(), v_.end(), std::make_pair(node, size_t{0}));
    return it != v_.end() && it->first == node ? it : v_.end();
  }
  std::vector<std::pair<uint32_t, size_t>> v_;
};

struct Cand {
  uint32_t node;
  int64_t take;
  double score;
  bool required;
  Amount avail;
};

// One placement attempt of the whole job at `start` (now-mode when start == now).
class Placer {
 public:
  // allocate = take resources now (start must be now); else reserve [start, start + limit).
  Placer(Session& s, Statement& st, const JobInfo& j, int64_t start, int alt, bool allocate,
         const PlaceScope* scope)
      : s_(s), st_(st), j_(j), start_(start), end_(start + j.time_limit), alt_(alt),
        now_(allocate), scope_(scope) {}

  // Places as many tasks as it can (all-or-nothing per group when the gang is strict).
  uint32_t Run() {
    const JobSnap& js = *j_.snap;
    if (!s_.resv().StartOk(j_.resv, start_)) return 0;  // issue 17 §1 (reservation.h)
    bool strict = j_.min_tasks >= j_.total_tasks;
    for (size_t gi = 0; gi < js.groups.size(); ++gi) {
      uint32_t placed = PlaceGroup(gi);
      tasks_ += placed;
      if (strict && placed < js.groups[gi].count) return tasks_;
    }
    if (used_.size() < js.nodes_min) return 0;
    for (const auto& req : js.nodelist)
      if (!HasNode(req)) return 0;
    return tasks_;
  }
  std::vector<NodePlacement>& placements() { return out_; }

 private:
  bool HasNode(const std::string& name) const {
    for (const auto& p : out_)
      if (p.node == name) return true;
    return false;
  }
  bool Eligible(const NodeRt& n) const {
    if (!n.usable || !s_.NodeOk(j_, n)) return false;
    if (!s_.resv().Allows(j_.resv, n.index, start_, end_)) return false;  // reservation blocks
    if (alt_ >= 0 && !j_.constraint.Matches(n.features, alt_)) return false;
    return true;
  }
  Amount Avail(const NodeRt& n, const std::string& model) const {
    Amount a = ClusterState::MinAvail(n, start_, end_);
    if (model.empty()) a.gpus = std::min(a.gpus, n.whole_total);  // MIG instances never serve ""
    else if (!ClusterState::HasGpuModel(n, model)) a.gpus = 0;
    if (now_) a.gpus = std::min(a.gpus, ClusterState::FreeGpusNow(n, model));
    return a;
  }
  bool ExclusiveOk(const NodeRt& n, const Amount& a) const {
    if (used_.count(n.index)) return false;  // one group per node for exclusive jobs
    return a.cpus == n.total.cpus && a.mem == n.total.mem && a.gpus >= n.total.gpus &&
           (!now_ || n.idle);
  }
  // The GPU this job already shares on `n` (an earlier group), or -1.
  int64_t SharedGpu(const NodeRt& n) const {
    long i = used_.Index(n.index);
    return i < 0 ? -1 : out_[static_cast<size_t>(i)].share_gpu;
  }
  void TakeShare(NodeRt& n, int pool, const ShareAmount& a, NodePlacement& p);
  // --segment caps (PlaceScope::leaf_caps): whether one more node of `node`'s leaf may be used.
  bool LeafCapOk(uint32_t node);
  std::vector<Cand> Collect(const GroupReq& g, int64_t left, int64_t spread);
  uint32_t PlaceGroup(size_t gi);

  Session& s_;
  Statement& st_;
  const JobInfo& j_;
  int64_t start_, end_;
  int alt_;
  bool now_;
  const PlaceScope* scope_;
  std::vector<uint32_t> leaf_used_;  // per scope_->leaf_caps entry
  uint32_t tasks_ = 0;
  // Every task left must open a node of its own to reach nodes_min (a job spread over task
  // groups of one task per node, e.g. tessera-sim's uneven multi-node jobs): a node an earlier
  // group already holds would leave the job short of nodes.
  bool fresh_only_ = false;
  UsedNodes used_;  // node -> index in out_
  std::vector<NodePlacement> out_;
};

std::vector<Cand> Placer::Collect(const GroupReq& g, int64_t left, int64_t spread) {
  const JobSnap& js = *j_.snap;
  const std::string& model = GroupModel(g);
  bool gpu = g.per_task.gpus + g.per_node.gpus > 0;
  bool share = WantsShare(g);
  std::vector<Cand> cands;
  cands.reserve(32);
  int64_t acc = 0;
  size_t window = s_.HasScores() ? s_.config().score_window : 1;
  auto consider = [&](NodeRt& n) {
    if (!Eligible(n)) return;
    if (fresh_only_ && used_.count(n.index)) return;
    Amount a = Avail(n, model);
    int64_t cap;
    if (js.exclusive)
      cap = ExclusiveOk(n, Avail(n, kAllGpuUnits)) ? std::min<int64_t>(Capacity(a, g, *n.snap), left) : 0;
    else cap = Capacity(a, g, *n.snap);
    // Shares are not on the timeline: they are checked now (a reservation at `now` too, so a
    // share job that cannot start is reserved at a later event, not "now").
    if (share && start_ <= s_.now() && cap > 0)
      cap = ShareCapacity(n, g, ShareModel(g), std::min(cap, left), SharedGpu(n));
    int64_t take = std::min({cap, spread, left});
    if (take <= 0) return;
    cands.push_back({n.index, take, 0, Contains(js.nodelist, n.snap->name), a});
    acc += take;
  };
  auto enough = [&] { return acc >= left && cands.size() >= window; };
  for (const auto& name : js.nodelist)  // required nodes first
    if (NodeRt* n = s_.state().FindNode(name)) consider(*n);
  if (scope_) {
    for (uint32_t i : scope_->nodes) {
      if (enough()) break;
      NodeRt& n = s_.state().nodes()[i];
      if (!InPartition(n, j_.partition) || (now_ && n.free.cpus <= 0)) continue;
      if (!js.nodelist.empty() && Contains(js.nodelist, n.snap->name)) continue;
      consider(n);
    }
  } else if (now_) {
    // Scan the open list, dropping nodes that have no CPU left (lazy compaction).
    auto& open = s_.state().OpenNodes(j_.partition, gpu);
    size_t w = 0, r = 0;
    for (; r < open.size() && !enough(); ++r) {
      NodeRt& n = s_.state().nodes()[open[r]];
      if (n.free.cpus <= 0 || (gpu && n.free.gpus <= 0)) continue;
      open[w++] = open[r];
      if (gpu && model.empty() && n.free_gpus.empty()) continue;  // only MIG instances free
      if (!js.nodelist.empty() && Contains(js.nodelist, n.snap->name)) continue;
      consider(n);
    }
    if (w != r) {
      std::move(open.begin() + static_cast<long>(r), open.end(), open.begin() + static_cast<long>(w));
      open.resize(open.size() - (r - w));
    }
  } else {
    for (uint32_t i : s_.state().PartitionNodes(j_.partition)) {
      if (enough()) break;
      NodeRt& n = s_.state().nodes()[i];
      if (!js.nodelist.empty() && Contains(js.nodelist, n.snap->name)) continue;
      consider(n);
    }
  }
  if (s_.HasScores()) {
    for (auto& c : cands)
      c.score = s_.Score(j_, s_.state().nodes()[c.node], NodeFit{c.avail, start_, end_});
    std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
      if (a.required != b.required) return a.required;
      return a.score > b.score;
    });
  }
  return cands;
}

uint32_t Placer::PlaceGroup(size_t gi) {
  const JobSnap& js = *j_.snap;
  const GroupReq& g = js.groups[gi];
  int64_t left = g.count;
  int64_t spread = js.nodes_min > 1 ? (g.count + js.nodes_min - 1) / js.nodes_min : left;
  const std::string& model = GroupModel(g);
  int64_t later = 0;
  for (size_t k = gi + 1; k < js.groups.size(); ++k) later += js.groups[k].count;
  fresh_only_ = !used_.empty() && js.nodes_min > used_.size() &&
                int64_t{js.nodes_min} - int64_t(used_.size()) >= left + later;
  for (const Cand& c : Collect(g, left, spread)) {
    if (left == 0) break;
    NodeRt& n = s_.state().nodes()[c.node];
    bool fresh = !used_.count(c.node);
    if (fresh && js.nodes_max && used_.size() >= js.nodes_max) continue;
    if (fresh && scope_ && !scope_->leaf_caps.empty() && !LeafCapOk(c.node)) continue;
    int64_t k = std::min(c.take, left);
    Amount amt = js.exclusive ? Amount{n.total.cpus, n.total.mem, n.total.gpus} : AmountFor(g, *n.snap, k);
    bool share = WantsShare(g);
    if (share && js.exclusive) amt.gpus = 0;  // the node is the job's; only the shared GPU is named
    int pool = -1;
    if (now_ && share) {
      pool = PickSharePool(n, ShareFor(g, k), ShareModel(g), SharedGpu(n));
      if (pool < 0) continue;
    }
    if (fresh) {
      used_.Add(c.node, out_.size());
      out_.push_back({n.snap->name, 0, 0, {}, 0, std::vector<uint32_t>(js.groups.size(), 0), {}});
    }
    NodePlacement& p = out_[static_cast<size_t>(used_.Index(c.node))];
    if (pool >= 0) TakeShare(n, pool, ShareFor(g, k), p);
    if (now_) {
      auto idx = st_.Allocate(n, amt, js.exclusive ? kAllGpuUnits : model, end_, &p.mig_uuids);
      p.gpu_indices.insert(p.gpu_indices.end(), idx.begin(), idx.end());
      std::sort(p.gpu_indices.begin(), p.gpu_indices.end());
    } else {
      st_.Reserve(n, amt, start_, end_);
    }
    p.cpus += static_cast<uint32_t>(amt.cpus);
    p.mem_mib += static_cast<uint64_t>(amt.mem);
    p.tasks += static_cast<uint32_t>(k);
    p.group_tasks[gi] += static_cast<uint32_t>(k);
    left -= k;
  }
  return static_cast<uint32_t>(g.count - left);
}

void Placer::TakeShare(NodeRt& n, int pool, const ShareAmount& a, NodePlacement& p) {
  p.share_gpu = st_.TakeShare(n, pool, a, end_);
  p.mps += a.mps;
  p.shards += a.shards;
}

bool Placer::LeafCapOk(uint32_t node) {
  const auto& caps = scope_->leaf_caps;
  leaf_used_.resize(caps.size(), 0);
  int32_t leaf = (*scope_->node_leaf)[node];
  for (size_t i = 0; i < caps.size(); ++i) {
    if (caps[i].first != leaf) continue;
    if (leaf_used_[i] >= caps[i].second) return false;
    ++leaf_used_[i];
    return true;
  }
  return true;
}

bool RequiredNodesDown(Session& s, const JobInfo& j) {
  for (const auto& name : j.snap->nodelist) {
    NodeRt* n = s.state().FindNode(name);
    if (!n || !n->usable) return true;
  }
  return false;
}

}  // namespace

namespace {

// PlaceAt's body; commit = false: a probe (the Statement is discarded, nothing stays taken).
bool PlaceAtImpl(Session& s, JobInfo& j, int64_t start, bool allocate, const PlaceScope* scope,
                 std::vector<NodePlacement>* out, bool commit) {
  const auto& alts = j.constraint.Alternatives();
  int n_alt = alts.empty() ? 1 : static_cast<int>(alts.size());
  for (int a = 0; a < n_alt; ++a) {
    Statement st(s.state());
    Placer p(s, st, j, start, alts.empty() ? -1 : a, allocate, scope);
    uint32_t tasks = p.Run();
    if (tasks > 0 && s.GangReady(j, tasks)) {
      if (commit) st.Commit();
      *out = std::move(p.placements());
      return true;
    }
  }
  return false;
}

}  // namespace

// Tries every [a|b] alternative (or none) at `start`; commits on success.
bool PlaceAt(Session& s, JobInfo& j, int64_t start, bool allocate, const PlaceScope* scope,
             std::vector<NodePlacement>* out) {
  return PlaceAtImpl(s, j, start, allocate, scope, out, true);
}

bool ProbeAt(Session& s, JobInfo& j, const PlaceScope* scope, std::vector<NodePlacement>* out) {
  return PlaceAtImpl(s, j, s.now(), true, scope, out, false);
}

const std::string& ShapeKey(JobInfo& j) {
  if (!j.shape.empty()) return j.shape;
  const JobSnap& js = *j.snap;
  std::string& k = j.shape;
  k = std::to_string(j.partition) + '|' + js.constraint + '|' + (js.exclusive ? "x" : "") + '|' +
      std::to_string(js.nodes_min) + ',' + std::to_string(js.nodes_max) + ',' +
      std::to_string(j.min_tasks) + ',' + std::to_string(j.time_limit);
  for (const auto& g : js.groups)
    k += '|' + std::to_string(g.count) + ',' + std::to_string(g.per_task.cpus) + ',' +
         std::to_string(g.per_task.mem_mib) + ',' + std::to_string(g.per_task.gpus) + ',' +
         g.per_task.gpu_model + ',' + std::to_string(g.tasks_per_node) + ',' +
         std::to_string(g.per_node.cpus) + ',' + std::to_string(g.per_node.mem_mib) + ',' +
         std::to_string(g.per_node.gpus) + ',' + g.per_node.gpu_model + ',' +
         std::to_string(g.per_task.mps) + ',' + std::to_string(g.per_task.shards) + ',' +
         std::to_string(g.per_node.mps) + ',' + std::to_string(g.per_node.shards) + ',' +
         std::to_string(g.per_task.gpu_mem_mib) + ',' + std::to_string(g.per_node.gpu_mem_mib) +
         ',' + g.per_task.share_model + ',' + g.per_node.share_model;
  for (const auto& n : js.nodelist) k += "|+" + n;
  for (const auto& n : js.exclude) k += "|-" + n;
  if (!js.reservation.empty()) k += "|@" + js.reservation;  // issue 17 §1
  return k;
}

namespace {

// Why a job that did not fit now waits, when reservations are part of the answer (issue 17
// §1): it would fit but for a MAINT reservation its time limit crosses (a probe that ignores
// MAINT blocks).
std::string ResvWaitReason(Session& s, JobInfo& j) {
  ResvView& rv = s.resv();
  if (rv.empty() || !rv.MaintCrosses(j.resv, s.now(), s.now() + j.time_limit))
    return "Resources";
  rv.ignore_maint = true;
  bool fits = PlaceNow(s, j, false, nullptr);
  rv.ignore_maint = false;
  return fits ? "ReqNodeNotAvail, Reserved for maintenance" : "Resources";
}

StartOutcome StartNowAs(Session& s, JobInfo& j, bool backfill) {
  std::string why = s.Allocatable(j);
  if (!why.empty()) {
    j.reason = why;
    return StartOutcome::kLimited;
  }
  if (!s.resv().StartOk(j.resv, s.now())) {  // its reservation has not begun: blocks nobody
    j.reason = "Reservation";
    return StartOutcome::kLimited;
  }
  bool topo = TopologyApplies(s, j);  // issue 15: gangs on a topology (topology_place.h)
  std::string topo_key = topo ? ShapeKey(j) + TopologyKeySuffix(s, j) : std::string();
  const std::string& key = topo ? topo_key : ShapeKey(j);
  bool strict = j.min_tasks >= j.total_tasks;
  const Amount& pf = s.state().PartitionFree(j.partition);
  bool hopeless = s.KnownToFail(key) || (strict && (j.total.cpus > pf.cpus || j.total.gpus > pf.gpus));
  std::vector<NodePlacement> placed;
  if (hopeless || !(topo ? PlaceWithTopology(s, j, s.now(), true, &placed)
                         : PlaceAt(s, j, s.now(), true, nullptr, &placed))) {
    s.RememberFailure(key);
    j.reason = RequiredNodesDown(s, j) ? "ReqNodeNotAvail" : "Resources";
    if (topo && j.reason == "Resources") j.reason = TopologyWaitReason(s, j);
    if (j.reason == "Resources") j.reason = ResvWaitReason(s, j);
    return StartOutcome::kNoResources;
  }
  j.stage = JobInfo::Stage::kStarted;
  j.reason.clear();
  Decision& d = s.decision(j);
  d.kind = Decision::Kind::kStart;
  d.placement = std::move(placed);
  d.backfilled = backfill;
  d.reason.clear();
  ++s.result().jobs_started;
  if (backfill) ++s.result().jobs_backfilled;
  s.NotifyAllocated(j, d.placement);
  return StartOutcome::kStarted;
}

// Whether the job's partition has units of every GPU model the job names (a reservation for a
// type or profile no node offers would scan every start time).
bool ModelsOffered(Session& s, const JobInfo& j) {
  for (const auto& g : j.snap->groups)
    if (!s.state().PartitionHasModel(j.partition, g.per_task.gpu_model) ||
        !s.state().PartitionHasModel(j.partition, g.per_node.gpu_model))
      return false;
  return true;
}

}  // namespace

void MarkReserved(Session& s, JobInfo& j, int64_t start, const std::vector<NodePlacement>& placed) {
  j.stage = JobInfo::Stage::kReserved;
  Decision& d = s.decision(j);
  d.expected_start = start;
  for (const auto& p : placed) d.reserved_nodes.push_back(p.node);
  ++s.result().reservations;
}

namespace {

// The minimum of a partition's free CPUs and GPUs over windows [t, t + len) for increasing t:
// one pass over the timeline with monotonic queues (a sliding-window minimum). Every placement
// takes at most a node's minimum over the window, and the sum of those minima is at most the
// minimum of the sum, so a strict gang needing more than this minimum cannot be placed there.
class WindowMin {
 public:
  WindowMin(const PartTimeline& tl, int64_t len) : tl_(tl), next_(tl.at.begin()), agg_(tl.free), len_(len) {}

  // The minimum over (t, t + len) of the free sums after each instant's events; `at_t`, the
  // sums after the events at or before t, is the value at t itself. Calls come with
  // non-decreasing t. The timeline may change between calls only by changes undone before the
  // next call (a discarded Statement), which neither erases nor alters an instant seen here.
  Amount Over(int64_t t, const Amount& at_t) {
    int64_t end = t > kNever - len_ ? kNever : t + len_;
    for (; next_ != tl_.at.end() && next_->first < end; ++next_) {
      agg_ += next_->second.sum;
      Push(cpus_, next_->first, agg_.cpus);
      Push(gpus_, next_->first, agg_.gpus);
    }
    Amount low = at_t;
    low.cpus = std::min(low.cpus, Front(cpus_, t, at_t.cpus));
    low.gpus = std::min(low.gpus, Front(gpus_, t, at_t.gpus));
    return low;
  }

 private:
  using Queue = std::deque<std::pair<int64_t, int64_t>>;  // (time, value), values increasing
  static void Push(Queue& q, int64_t time, int64_t v) {
    while (!q.empty() && q.back().second >= v) q.pop_back();
    q.emplace_back(time, v);
  }
  static int64_t Front(Queue& q, int64_t t, int64_t dflt) {
    while (!q.empty() && q.front().first <= t) q.pop_front();
    return q.empty() ? dflt : q.front().second;
  }

  const PartTimeline& tl_;
  std::map<int64_t, TimeBucket>::const_iterator next_;
  Amount agg_;
  int64_t len_;
  Queue cpus_, gpus_;
};

// The earliest start (now, then each instant within bf_window when CPUs or GPUs come back or a
// reservation block begins or ends) where the whole job fits for its time limit. The
// partition's merged timeline (ClusterState::Timeline) gives the instants and the free sums;
// a strict gang is not scanned for at an instant where the free sums at it, or over its window
// (WindowMin), are short of its total: PlaceAt could not place it there. Such a window-short
// instant still counts as a try (bf_max_times), as the failed scan did before.
bool ReserveAs(Session& s, JobInfo& j) {
  if (!ModelsOffered(s, j)) return false;
  if (TopologyApplies(s, j)) return ReserveWithTopology(s, j);
  const PartTimeline& tl = s.state().Timeline(j.partition);
  Amount agg = tl.free;
  int64_t horizon = s.now() + s.config().bf_window;
  bool strict = j.min_tasks >= j.total_tasks;
  uint32_t tries = 0;
  WindowMin window(tl, std::max<int64_t>(1, j.time_limit));
  auto reserve_at = [&](int64_t t) {
    if (strict && (agg.cpus < j.total.cpus || agg.gpus < j.total.gpus)) return false;
    if (++tries > s.config().bf_max_times) return false;
    if (strict) {
      Amount low = window.Over(t, agg);
      if (low.cpus < j.total.cpus || low.gpus < j.total.gpus) return false;
    }
    std::vector<NodePlacement> placed;
    if (!PlaceAt(s, j, t, false, nullptr, &placed)) return false;
    MarkReserved(s, j, t, placed);
    return true;
  };
  auto e = tl.at.begin();
  for (; e != tl.at.end() && e->first <= s.now(); ++e) agg += e->second.sum;
  if (reserve_at(s.now())) return true;
  // Reservation boundaries (issue 17 §1) are start times too: a block ends, or one begins.
  std::vector<int64_t> bounds = s.resv().Boundaries(s.now() + 1, horizon);
  size_t b = 0;
  auto in_window = [&] { return e != tl.at.end() && e->first <= horizon; };
  while ((in_window() || b < bounds.size()) && tries <= s.config().bf_max_times) {
    int64_t t = std::min(in_window() ? e->first : kNever, b < bounds.size() ? bounds[b] : kNever);
    bool gain = false;
    for (; b < bounds.size() && bounds[b] == t; ++b) gain = true;
    if (in_window() && e->first == t) {
      agg += e->second.sum;
      gain |= e->second.gains > 0;
      ++e;
    }
    if (gain && reserve_at(t)) return true;
  }
  return false;
}

}  // namespace

// GPUs by need (--gpu-mem, gpu_mem.h): the job is tried as one concrete model after another.
StartOutcome TryStartNow(Session& s, JobInfo& j, bool backfill) {
  if (!AsksGpuMem(*j.snap)) return StartNowAs(s, j, backfill);
  StartOutcome out = StartOutcome::kNoResources;
  ForEachGpuMemVariant(s, j, [&](JobInfo& v) {
    out = StartNowAs(s, v, backfill);
    return out != StartOutcome::kNoResources;
  });
  return out;
}

bool TryReserve(Session& s, JobInfo& j) {
  if (!AsksGpuMem(*j.snap)) return ReserveAs(s, j);
  return ForEachGpuMemVariant(s, j, [&](JobInfo& v) { return ReserveAs(s, v); });
}

// --- issue 16 §4 (preempt helper) ---
bool PlaceNow(Session& s, JobInfo& j, bool keep, std::vector<NodePlacement>* out) {
  if (TopologyApplies(s, j)) {  // the preemptor's --switches/--segment/TopologyMode (issue 15)
    std::vector<NodePlacement> placed;
    if (!(keep ? PlaceWithTopology(s, j, s.now(), true, &placed) : ProbeWithTopology(s, j, &placed)))
      return false;
    if (out) *out = std::move(placed);
    return true;
  }
  if (keep) {
    std::vector<NodePlacement> placed;
    if (!PlaceAt(s, j, s.now(), true, nullptr, &placed)) return false;
    if (out) *out = std::move(placed);
    return true;
  }
  const auto& alts = j.constraint.Alternatives();
  int n_alt = alts.empty() ? 1 : static_cast<int>(alts.size());
  for (int a = 0; a < n_alt; ++a) {
    Statement st(s.state());  // discarded when it goes out of scope
    Placer p(s, st, j, s.now(), alts.empty() ? -1 : a, true, nullptr);
    uint32_t tasks = p.Run();
    if (tasks > 0 && s.GangReady(j, tasks)) {
      if (out) *out = p.placements();
      return true;
    }
  }
  return false;
}

}  // namespace tessera::sched
