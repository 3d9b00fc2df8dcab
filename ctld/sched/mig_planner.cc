#include "ctld/sched/mig_planner.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "common/mig_profiles.h"

namespace tessera::sched {
namespace {

struct Inst {
  std::string profile;
  uint32_t start = 0;
  std::string uuid;      // "" for an instance this plan creates
  bool claimed = false;  // counted toward a demand item of this plan
};

struct GpuPlan {
  const MigGpuSnap* snap = nullptr;
  const MigModel* model = nullptr;
  bool candidate = false;  // may be changed
  bool changed = false;
  std::vector<Inst> layout;
  std::vector<uint64_t> jobs;
};

uint32_t Mask(uint32_t start, uint32_t size) { return ((1u << size) - 1u) << start; }

int64_t Score(const MigModel& m, const std::vector<MigPlacement>& layout) {
  uint32_t occ = 0, compute = 0;
  std::map<std::string, uint32_t> count;
  for (const auto& pl : layout) {
    const MigProfile* p = FindMigProfile(m, pl.profile);
    if (!p) continue;
    occ |= Mask(pl.start, p->memory_slices);
    compute += p->compute;
    ++count[pl.profile];
  }
  int64_t score = 0;
  for (const auto& p : m.profiles) {
    if (p.media_extensions || count[p.name] >= p.max_instances) continue;
    if (compute + p.compute > m.compute_slices) continue;
    for (uint32_t s : p.starts)
      if (s + p.memory_slices <= m.memory_slices && !(occ & Mask(s, p.memory_slices)))
        score += int64_t{p.memory_slices} * p.memory_slices;
  }
  return score;
}

struct Best {
  bool found = false;
  int64_t score = 0;
  std::vector<uint32_t> starts;
};

// Every way to add `k` instances of `p` (nondecreasing starts) to `base`; keeps the best.
void SearchStarts(const MigModel& m, const MigProfile& p, std::vector<MigPlacement>& layout,
                  uint32_t k, size_t from, std::vector<uint32_t>& starts, Best& best) {
  if (k == 0) {
    if (!ValidateMigLayout(m, layout).ok()) return;
    int64_t sc = Score(m, layout);
    if (!best.found || sc > best.score) best = {true, sc, starts};
    return;
  }
  uint32_t occ = 0;
  for (const auto& pl : layout) {
    const MigProfile* q = FindMigProfile(m, pl.profile);
    if (q) occ |= Mask(pl.start, q->memory_slices);
  }
  for (size_t i = from; i < p.starts.size(); ++i) {
    uint32_t s = p.starts[i];
    if (s + p.memory_slices > m.memory_slices || (occ & Mask(s, p.memory_slices))) continue;
    layout.push_back({p.name, s});
    starts.push_back(s);
    SearchStarts(m, p, layout, k - 1, i + 1, starts, best);
    starts.pop_back();
    layout.pop_back();
  }
}

// Subsets of `n` items with exactly `d` members, as bit masks in increasing order.
std::vector<uint32_t> SubsetsOfSize(size_t n, uint32_t d) {
  std::vector<uint32_t> out;
  for (uint32_t s = 0; s < (1u << n); ++s)
    if (static_cast<uint32_t>(__builtin_popcount(s)) == d) out.push_back(s);
  return out;
}

// Adds up to `need` new instances of `profile` to `g` (destroying as few unclaimed instances
// as possible); returns how many were added.
// How many instances of `p` fit beside the claimed instances of `g` (the most AddInstances can
// add), by a first-fit over the allowed starts (exact for the aligned MIG placements).
uint32_t Room(const GpuPlan& g, const MigProfile& p) {
  std::vector<MigPlacement> l;
  for (const auto& i : g.layout)
    if (i.claimed) l.push_back({i.profile, i.start});
  uint32_t n = 0;
  for (uint32_t s : p.starts) {
    l.push_back({p.name, s});
    if (ValidateMigLayout(*g.model, l).ok()) ++n;
    else l.pop_back();
  }
  return n;
}

uint32_t AddInstances(GpuPlan& g, const MigProfile& p, uint32_t need, uint64_t job) {
  std::vector<size_t> removable;
  for (size_t i = 0; i < g.layout.size(); ++i)
    if (!g.layout[i].claimed) removable.push_back(i);
  need = std::min(need, Room(g, p));  // never search for more than can fit
  for (uint32_t k = need; k >= 1; --k) {
    for (uint32_t d = 0; d <= removable.size(); ++d) {
      Best best;
      uint32_t best_drop = 0;
      for (uint32_t drop : SubsetsOfSize(removable.size(), d)) {
        std::vector<MigPlacement> base;
        for (size_t i = 0; i < g.layout.size(); ++i) {
          auto r = std::find(removable.begin(), removable.end(), i);
          if (r != removable.end() && (drop >> (r - removable.begin())) & 1u) continue;
          base.push_back({g.layout[i].profile, g.layout[i].start});
        }
        std::vector<uint32_t> starts;
        Best b;
        SearchStarts(*g.model, p, base, k, 0, starts, b);
        if (b.found && (!best.found || b.score > best.score)) best = b, best_drop = drop;
      }
      if (!best.found) continue;
      std::vector<Inst> next;
      for (size_t i = 0; i < g.layout.size(); ++i) {
        auto r = std::find(removable.begin(), removable.end(), i);
        if (r != removable.end() && (best_drop >> (r - removable.begin())) & 1u) continue;
        next.push_back(g.layout[i]);
      }
      for (uint32_t s : best.starts) next.push_back({p.name, s, "", true});
      g.layout = std::move(next);
      g.changed = true;
      g.jobs.push_back(job);
      return k;
    }
  }
  return 0;
}

// Rank of a GPU for a demand of `profile` (lower first); -1 = cannot help.
int Rank(const GpuPlan& g, const std::string& profile) {
  if (!g.model || !FindMigProfile(*g.model, profile)) return -1;
  bool has = false;
  for (const auto& i : g.layout) has = has || (i.profile == profile && !i.claimed);
  if (!g.candidate) return has ? 2 : -1;
  bool same = false;
  for (const auto& i : g.layout) same = same || i.profile == profile;
  if (g.changed) return same ? 0 : 1;
  if (has) return 0;
  return g.snap->mig_enabled ? 2 : 3;
}

// An upper bound of the instances of `profile` node plans `gpus` could give (existing unclaimed
// ones plus the room on candidate GPUs).
uint32_t NodeRoom(const std::vector<GpuPlan>& gpus, const std::string& profile) {
  uint32_t n = 0;
  for (const auto& g : gpus) {
    const MigProfile* p = g.model ? FindMigProfile(*g.model, profile) : nullptr;
    if (!p) continue;
    if (g.candidate) {
      n += Room(g, *p);
    } else {
      for (const auto& i : g.layout) n += i.profile == profile && !i.claimed;
    }
  }
  return n;
}

// Serves `d` on node plans `gpus` (changed in place); false (and `gpus` unusable) when not all.
bool ServeOnNode(std::vector<GpuPlan>& gpus, const MigDemand& d) {
  std::vector<std::pair<int, size_t>> order;
  for (size_t i = 0; i < gpus.size(); ++i) {
    int r = Rank(gpus[i], d.profile);
    if (r >= 0) order.push_back({r, i});
  }
  std::sort(order.begin(), order.end());
  uint32_t need = d.count;
  // First the free instances of the profile that exist (or that this plan made) and are unclaimed.
  for (auto& [r, i] : order)
    for (auto& inst : gpus[i].layout)
      if (need > 0 && inst.profile == d.profile && !inst.claimed) {
        inst.claimed = true;
        --need;
        if (std::find(gpus[i].jobs.begin(), gpus[i].jobs.end(), d.job_id) == gpus[i].jobs.end())
          gpus[i].jobs.push_back(d.job_id);
      }
  for (auto& [r, i] : order) {
    if (need == 0) break;
    GpuPlan& g = gpus[i];
    if (!g.candidate) continue;
    need -= AddInstances(g, *FindMigProfile(*g.model, d.profile), need, d.job_id);
  }
  return need == 0;
}

GpuPlan MakePlan(const MigGpuSnap& s, const MigPlanOptions& opt) {
  GpuPlan g;
  g.snap = &s;
  g.model = FindMigModel(s.mig_model);
  bool all_free = true;
  for (const auto& i : s.instances) {
    all_free = all_free && i.free;
    g.layout.push_back({i.profile, i.start, i.uuid, !i.free});
  }
  g.candidate = g.model && s.dynamic && !s.busy && all_free &&
                (s.mig_enabled || opt.allow_enable_mig);
  return g;
}

int NodeRank(const std::vector<GpuPlan>& gpus, const std::string& profile) {
  int best = -1;
  for (const auto& g : gpus) {
    int r = Rank(g, profile);
    if (r >= 0 && (best < 0 || r < best)) best = r;
  }
  return best;
}

}  // namespace

int64_t MigFragmentationScore(const std::string& model,
                              const std::vector<MigInstanceSnap>& layout) {
  const MigModel* m = FindMigModel(model);
  if (!m) return 0;
  std::vector<MigPlacement> l;
  for (const auto& i : layout) l.push_back({i.profile, i.start});
  return Score(*m, l);
}

std::vector<MigReconfig> PlanMig(const std::vector<MigPlanNode>& nodes,
                                 const std::vector<MigDemand>& demand, const MigPlanOptions& opt) {
  std::vector<std::vector<GpuPlan>> plans(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n)
    for (const auto& g : nodes[n].gpus) plans[n].push_back(MakePlan(g, opt));
  // Plans only take resources, so a (profile, count, nodes) that found no node fails again.
  std::set<std::tuple<std::string, uint32_t, std::vector<uint32_t>>> failed;
  for (const auto& d : demand) {
    if (d.count == 0) continue;
    auto key = std::make_tuple(d.profile + "x" + std::to_string(d.node_count), d.count, d.nodes);
    if (failed.count(key)) continue;
    std::vector<std::pair<int, uint32_t>> order;
    auto consider = [&](uint32_t n) {
      if (n >= nodes.size()) return;
      int r = NodeRank(plans[n], d.profile);
      if (r >= 0) order.push_back({r, n});
    };
    if (d.nodes.empty()) {
      for (uint32_t n = 0; n < nodes.size(); ++n) consider(n);
    } else {
      for (uint32_t n : d.nodes) consider(n);
    }
    std::sort(order.begin(), order.end());
    order.erase(std::unique(order.begin(), order.end()), order.end());
    // Trials per node, kept only when node_count nodes are served (all or nothing for gangs).
    std::vector<std::pair<uint32_t, std::vector<GpuPlan>>> served;
    uint32_t want = std::max<uint32_t>(1, d.node_count);
    for (const auto& [r, n] : order) {
      if (served.size() >= want) break;
      if (NodeRoom(plans[n], d.profile) < d.count) continue;
      std::vector<GpuPlan> trial = plans[n];
      if (!ServeOnNode(trial, d)) continue;
      served.push_back({n, std::move(trial)});
    }
    if (served.size() < want) {
      failed.insert(key);
      continue;
    }
    for (auto& [n, trial] : served) plans[n] = std::move(trial);
  }
  std::vector<MigReconfig> out;
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (const auto& g : plans[n]) {
      if (!g.changed) continue;
      MigReconfig r;
      r.node = nodes[n].name;
      r.gpu_index = g.snap->index;
      for (const auto& old : g.snap->instances) {
        bool kept = false;
        for (const auto& i : g.layout) kept = kept || (!old.uuid.empty() && i.uuid == old.uuid);
        if (!kept) r.destroy.push_back(old.uuid);
      }
      for (const auto& i : g.layout)
        if (i.uuid.empty()) r.create.push_back({i.profile, i.start});
      std::sort(r.create.begin(), r.create.end(),
                [](const auto& a, const auto& b) { return a.second < b.second; });
      r.for_jobs = g.jobs;
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace tessera::sched
