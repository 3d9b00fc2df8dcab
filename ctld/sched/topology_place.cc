#include "ctld/sched/topology_place.h"

#include <algorithm>
#include <functional>
#include <tuple>

#include "ctld/sched/placement.h"
#include "ctld/sched/topology_state.h"

namespace tessera::sched {
namespace {

// What a group offers for ranking: free CPUs/GPUs and usable node count (an upper bound).
struct GroupAvail {
  int64_t cpus = 0, gpus = 0;
  int64_t nodes = 0;
};
using AvailFn = std::function<GroupAvail(uint32_t group)>;

struct TopoJob {
  bool required = false;
  uint32_t max_leaves = 0;  // --switches while waiting (tree); 0 = no limit
  uint32_t segment = 0;     // --segment (block); 0 = none
  int need_tier = -1;       // lowest tier with a group that holds it on an empty cluster
  int64_t nodes = 1;        // nodes_min, at least 1
  Amount need;
};

bool SwitchWaiting(Session& s, const JobInfo& j) {
  const JobSnap& js = *j.snap;
  if (js.switches == 0 || !s.state().topo()->IsTree()) return false;
  int64_t since = js.eligible_time ? js.eligible_time : js.submit_time;
  return s.now() < since + js.switches_wait_s;
}

bool Holds(const GroupAvail& a, const TopoJob& tj) {
  return a.cpus >= tj.need.cpus && a.gpus >= tj.need.gpus && a.nodes >= tj.nodes;
}

int NeedTier(Session& s, const JobInfo& j, const TopoJob& tj) {
  TopoState& t = *s.state().topo();
  for (size_t tier = 0; tier < t.TierCount(); ++tier) {
    for (uint32_t g : t.Tier(tier)) {
      const GroupFree& f = t.Free(j.partition, g);
      if (Holds({f.cpus_total, f.gpus_total, f.nodes}, tj)) return static_cast<int>(tier);
    }
  }
  return -1;
}

TopoJob Describe(Session& s, const JobInfo& j) {
  TopoJob tj;
  const JobSnap& js = *j.snap;
  tj.required = TopologyRequired(s, j);
  tj.max_leaves = SwitchWaiting(s, j) ? js.switches : 0;
  tj.segment = s.state().topo()->IsTree() ? 0 : js.segment;
  tj.nodes = std::max<int64_t>(1, js.nodes_min);
  tj.need = j.total;
  tj.need_tier = NeedTier(s, j, tj);
  return tj;
}

// The nodes of `leaves`, in node Weight order (then topology order).
PlaceScope ScopeOf(Session& s, const std::vector<int32_t>& leaves) {
  TopoState& t = *s.state().topo();
  const auto& nodes = s.state().nodes();
  PlaceScope sc;
  for (int32_t leaf : leaves)
    for (uint32_t n : t.LeafNodes(leaf))
      if (n < nodes.size()) sc.nodes.push_back(n);
  std::stable_sort(sc.nodes.begin(), sc.nodes.end(), [&](uint32_t a, uint32_t b) {
    return nodes[a].snap->weight < nodes[b].snap->weight;
  });
  return sc;
}

// What group `g` offers when at most `max` of its leaves may be used (0 = all): the group's
// sums, or those of its `max` leaves with the most free resources (then `leaves` gets them).
GroupAvail Offer(Session& s, uint32_t g, uint32_t max, const AvailFn& avail, bool gpu,
                 std::vector<int32_t>* leaves) {
  const std::vector<int32_t>& all = s.state().topo()->Group(g).leaves;
  if (max == 0 || all.size() <= max) return avail(g);
  *leaves = all;
  auto key = [&](int32_t l) {
    GroupAvail a = avail(static_cast<uint32_t>(l));
    return std::make_tuple(gpu ? a.gpus : a.cpus, a.nodes, -l);
  };
  std::stable_sort(leaves->begin(), leaves->end(),
                   [&](int32_t a, int32_t b) { return key(a) > key(b); });
  leaves->resize(max);
  GroupAvail sum;
  for (int32_t l : *leaves) {
    GroupAvail a = avail(static_cast<uint32_t>(l));
    sum.cpus += a.cpus, sum.gpus += a.gpus, sum.nodes += a.nodes;
  }
  return sum;
}

struct Attempt {
  Session& s;
  JobInfo& j;
  const TopoJob& tj;
  int64_t start;
  bool allocate;
  uint32_t* tries;  // PlaceAt calls left (reservations: bf_max_times)
  std::vector<NodePlacement>* out;
  bool probe = false;  // ProbeWithTopology: nothing is taken

  bool Place(const PlaceScope* scope) {
    if (*tries == 0) return false;
    --*tries;
    if (probe) return ProbeAt(s, j, scope, out);
    return PlaceAt(s, j, start, allocate, scope, out);
  }
};

// One tier: the groups (of those marked in `dirty`, when given) that could hold the job, best
// fit first, at most kTopoTriesPerTier tried. A group holding the whole partition is not tried
// (with no --switches cap): `*covering` is set and the caller places the job unrestricted.
bool TryTier(Attempt& at, size_t tier, const AvailFn& avail, const std::vector<char>* dirty,
             bool* covering) {
  TopoState& t = *at.s.state().topo();
  bool gpu = at.tj.need.gpus > 0;
  struct Cand {
    int64_t left, open;
    uint32_t g;
    std::vector<int32_t> leaves;
  };
  std::vector<Cand> cands;  // leaves: only when cut to max_leaves
  std::vector<int32_t> leaves;
  for (uint32_t g : t.Tier(tier)) {
    if (dirty && !(*dirty)[g]) continue;
    if (at.tj.max_leaves == 0 && t.Covers(at.j.partition, g)) {
      *covering = true;
      continue;
    }
    leaves.clear();
    GroupAvail sum = Offer(at.s, g, at.tj.max_leaves, avail, gpu, &leaves);
    if (!Holds(sum, at.tj)) continue;
    int64_t left = gpu ? sum.gpus - at.tj.need.gpus : sum.cpus - at.tj.need.cpus;
    cands.push_back({left, sum.nodes, g, leaves});
  }
  std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
    return std::tie(a.left, a.open, a.g) < std::tie(b.left, b.open, b.g);
  });
  for (size_t i = 0; i < cands.size() && i < kTopoTriesPerTier; ++i) {
    PlaceScope sc;
    if (cands[i].leaves.empty()) sc.nodes = t.GroupNodes(cands[i].g, at.s.state().nodes());
    else sc = ScopeOf(at.s, cands[i].leaves);
    if (at.Place(&sc)) return true;
  }
  return false;
}

// --segment=N: whole segments per block (tier-0 groups), see the header.
bool TrySegments(Attempt& at, const AvailFn& avail) {
  TopoState& t = *at.s.state().topo();
  const TopoJob& tj = at.tj;
  int64_t n = tj.segment;
  int64_t segs = (tj.nodes + n - 1) / n;
  int64_t node_cpus = (tj.need.cpus + tj.nodes - 1) / tj.nodes;
  int64_t node_gpus = (tj.need.gpus + tj.nodes - 1) / tj.nodes;
  std::vector<std::pair<int64_t, int32_t>> cap;  // (segments it could take, block)
  for (uint32_t b : t.Tier(0)) {
    GroupAvail a = avail(b);
    int64_t k = a.nodes;
    if (node_cpus > 0) k = std::min(k, a.cpus / node_cpus);
    if (node_gpus > 0) k = std::min(k, a.gpus / node_gpus);
    if (k / n > 0) cap.push_back({k / n, static_cast<int32_t>(b)});
  }
  std::sort(cap.begin(), cap.end());
  std::vector<std::vector<std::pair<int32_t, uint32_t>>> plans;
  for (const auto& [k, b] : cap) {  // single blocks, best fit first
    if (k < segs) continue;
    plans.push_back({{b, static_cast<uint32_t>(segs * n)}});
    if (plans.size() >= kTopoTriesPerTier) break;
  }
  if (plans.empty()) {  // most free segments first, until every segment has a block
    std::vector<std::pair<int32_t, uint32_t>> plan;
    int64_t left = segs;
    for (auto it = cap.rbegin(); it != cap.rend() && left > 0; ++it) {
      int64_t take = std::min(left, it->first);
      plan.push_back({it->second, static_cast<uint32_t>(take * n)});
      left -= take;
    }
    if (left == 0) plans.push_back(plan);
  }
  for (const auto& plan : plans) {
    std::vector<int32_t> leaves;
    for (const auto& c : plan) leaves.push_back(c.first);
    PlaceScope sc = ScopeOf(at.s, leaves);
    sc.leaf_caps = plan;
    sc.node_leaf = &t.topo().node_leaf;
    if (at.Place(&sc)) return true;
  }
  return false;
}

bool Search(Attempt& at, const AvailFn& avail, const std::vector<char>* dirty) {
  const TopoJob& tj = at.tj;
  if (tj.segment > 0) return TrySegments(at, avail);
  TopoState& t = *at.s.state().topo();
  bool capped = tj.required && tj.need_tier >= 0;
  bool covering = false;
  for (size_t tier = 0; tier < t.TierCount(); ++tier) {
    if (capped && tier > static_cast<size_t>(tj.need_tier)) break;
    if (TryTier(at, tier, avail, dirty, &covering)) return true;
    if (covering) break;  // higher tiers hold the whole partition too
  }
  if ((capped && !covering) || tj.max_leaves > 0) return false;
  return at.Place(nullptr);
}

// Whether every task of `j` asks GPUs (then only nodes with a free GPU can serve it).
bool AllTasksUseGpus(const JobInfo& j) {
  for (const auto& g : j.snap->groups)
    if (g.per_task.gpus + g.per_node.gpus == 0) return false;
  return !j.snap->groups.empty();
}

AvailFn NowAvail(Session& s, const JobInfo& j) {
  TopoState* t = s.state().topo();
  bool exclusive = j.snap->exclusive, gpu = AllTasksUseGpus(j);
  int part = j.partition;
  return [t, exclusive, gpu, part](uint32_t g) {
    const GroupFree& f = t->Free(part, g);
    int64_t nodes = exclusive ? f.idle : gpu ? f.gpu_open : f.open;
    return GroupAvail{f.cpus, f.gpus, nodes};
  };
}

}  // namespace

bool TopologyRequired(Session& s, const JobInfo& j) {
  const QosConfig* q = s.config().FindQos(j.snap->qos);
  if (q && q->topology_mode >= 0) return q->topology_mode == 1;
  return s.state().Partition(j.partition).topology_required;
}

bool TopologyApplies(Session& s, const JobInfo& j) {
  TopoState* t = s.state().topo();
  if (!t) return false;
  const JobSnap& js = *j.snap;
  if (js.nodes_max == 1) return false;
  if (js.nodes_min >= 2) return true;
  return j.total.cpus > t->MaxNodeCpus(j.partition) || j.total.gpus > t->MaxNodeGpus(j.partition);
}

bool PlaceWithTopology(Session& s, JobInfo& j, int64_t start, bool allocate,
                       std::vector<NodePlacement>* out) {
  TopoJob tj = Describe(s, j);
  uint32_t tries = ~0u;
  Attempt at{s, j, tj, start, allocate, &tries, out};
  return Search(at, NowAvail(s, j), nullptr);
}

bool ProbeWithTopology(Session& s, JobInfo& j, std::vector<NodePlacement>* out) {
  TopoJob tj = Describe(s, j);
  uint32_t tries = ~0u;
  Attempt at{s, j, tj, s.now(), true, &tries, out, true};
  return Search(at, NowAvail(s, j), nullptr);
}

std::string TopologyKeySuffix(Session& s, const JobInfo& j) {
  const JobSnap& js = *j.snap;
  return "|T" + std::string(TopologyRequired(s, j) ? "r" : "p") +
         (SwitchWaiting(s, j) ? "w" + std::to_string(js.switches) : std::string()) +
         (js.segment ? "s" + std::to_string(js.segment) : std::string());
}

std::string TopologyWaitReason(Session& s, const JobInfo& j) {
  if (!TopologyRequired(s, j) || j.snap->segment > 0) return "Resources";
  TopoJob tj = Describe(s, j);
  const Amount& pf = s.state().PartitionFree(j.partition);
  if (tj.need_tier >= 0 && pf.cpus >= j.total.cpus && pf.gpus >= j.total.gpus) return "Topology";
  return "Resources";
}

namespace {

struct LeafEvent {
  int64_t time;
  Amount delta;
  int32_t leaf;  // -1: a node with no place
};

}  // namespace

bool ReserveWithTopology(Session& s, JobInfo& j) {
  TopoState& t = *s.state().topo();
  TopoJob tj = Describe(s, j);
  std::vector<GroupAvail> agg(t.GroupCount());
  for (uint32_t g = 0; g < agg.size(); ++g) {
    const GroupFree& f = t.Free(j.partition, g);
    agg[g] = {f.cpus, f.gpus, f.nodes};  // node counts: an upper bound at any time
  }
  Amount part;
  std::vector<LeafEvent> events;
  int64_t horizon = s.now() + s.config().bf_window;
  for (uint32_t i : s.state().PartitionNodes(j.partition)) {
    const NodeRt& n = s.state().nodes()[i];
    if (!n.usable) continue;
    part += n.free;
    for (const auto& e : n.events)
      if (e.time <= horizon) events.push_back({e.time, e.delta, t.LeafOf(i)});
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const LeafEvent& a, const LeafEvent& b) { return a.time < b.time; });
  auto apply = [&](const LeafEvent& e, std::vector<char>* dirty) {
    part += e.delta;
    if (e.leaf < 0) return;
    for (uint32_t g : t.GroupsOfLeaf(e.leaf)) {
      agg[g].cpus += e.delta.cpus, agg[g].gpus += e.delta.gpus;
      if (dirty && (e.delta.cpus > 0 || e.delta.gpus > 0)) (*dirty)[g] = 1;
    }
  };
  AvailFn avail = [&](uint32_t g) { return agg[g]; };
  bool strict = j.min_tasks >= j.total_tasks;
  uint32_t tries = s.config().bf_max_times;
  auto reserve_at = [&](int64_t when, const std::vector<char>* dirty) {
    if (strict && (part.cpus < j.total.cpus || part.gpus < j.total.gpus)) return false;
    std::vector<NodePlacement> placed;
    Attempt at{s, j, tj, when, false, &tries, &placed};
    if (!Search(at, avail, dirty)) return false;
    MarkReserved(s, j, when, placed);
    return true;
  };
  size_t e = 0;
  while (e < events.size() && events[e].time <= s.now()) apply(events[e++], nullptr);
  if (reserve_at(s.now(), nullptr)) return true;
  std::vector<char> dirty(t.GroupCount(), 0);
  while (e < events.size() && tries > 0) {
    int64_t when = events[e].time;
    std::fill(dirty.begin(), dirty.end(), 0);
    bool gain = false;
    for (; e < events.size() && events[e].time == when; ++e) {
      gain |= events[e].delta.cpus > 0 || events[e].delta.gpus > 0;
      apply(events[e], &dirty);
    }
    if (gain && reserve_at(when, &dirty)) return true;
  }
  return false;
}

}  // namespace tessera::sched
