// Independent check of the dynamic MIG planner: every layout it produces over many random
// clusters and demand sequences (seeded) is valid by the project's shared MIG reference data
// (tests/unit/sched/data/mig_profiles.json, parsed here with Boost.JSON: this file does not use
// common/mig_profiles to judge validity), never touches a GPU with an instance in use (or a busy,
// static GPU), and serves the first demand item whenever some node could hold it.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "ctld/sched/mig_planner.h"

using namespace tessera::sched;
namespace json = boost::json;

namespace {

struct RefProfile {
  std::string name;
  uint32_t compute = 0, size = 0, max = 0;
  std::set<uint32_t> starts;
  bool me = false;
};
struct RefModel {
  uint32_t memory_slices = 0, compute_slices = 0;
  std::vector<RefProfile> profiles;
  std::vector<std::pair<std::set<std::string>, uint32_t>> exclusive;  // profiles, max total
  const RefProfile* Find(const std::string& n) const {
    for (const auto& p : profiles)
      if (p.name == n) return &p;
    return nullptr;
  }
};

std::map<std::string, RefModel> LoadReference() {
  std::ifstream f(std::string(TESSERA_SOURCE_DIR) + "/tests/unit/sched/data/mig_profiles.json");
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  json::value root = json::parse(ss.str());
  std::map<std::string, RefModel> out;
  for (const auto& [name, mv] : root.at("models").as_object()) {
    RefModel m;
    m.memory_slices = static_cast<uint32_t>(mv.at("memory_slices").to_number<int64_t>());
    m.compute_slices = static_cast<uint32_t>(mv.at("compute_slices").to_number<int64_t>());
    for (const auto& pv : mv.at("profiles").as_array()) {
      RefProfile p;
      p.name = json::value_to<std::string>(pv.at("name"));
      p.compute = static_cast<uint32_t>(pv.at("compute").to_number<int64_t>());
      p.size = static_cast<uint32_t>(pv.at("memory_slices").to_number<int64_t>());
      p.max = static_cast<uint32_t>(pv.at("max_instances").to_number<int64_t>());
      p.me = pv.at("media_extensions").as_bool();
      for (const auto& pl : pv.at("placements").as_array()) {
        REQUIRE(pl.at("size").to_number<int64_t>() == p.size);
        p.starts.insert(static_cast<uint32_t>(pl.at("start").to_number<int64_t>()));
      }
      m.profiles.push_back(p);
    }
    for (const auto& g : mv.at("exclusive_groups").as_array()) {
      std::set<std::string> names;
      for (const auto& n : g.at("profiles").as_array()) names.insert(json::value_to<std::string>(n));
      m.exclusive.push_back({names, static_cast<uint32_t>(g.at("max_total").to_number<int64_t>())});
    }
    out[std::string(name)] = m;
  }
  return out;
}

// "" when valid, else what is wrong.
std::string Check(const RefModel& m, const std::vector<std::pair<std::string, uint32_t>>& layout) {
  std::vector<int> used(m.memory_slices, 0);
  std::map<std::string, uint32_t> count;
  uint32_t compute = 0;
  for (const auto& [name, start] : layout) {
    const RefProfile* p = m.Find(name);
    if (!p) return "unknown profile " + name;
    if (!p->starts.count(start)) return name + " may not start at " + std::to_string(start);
    for (uint32_t s = start; s < start + p->size; ++s) {
      if (s >= m.memory_slices) return name + " runs past the last slice";
      if (used[s]++) return "overlap on memory slice " + std::to_string(s);
    }
    if (++count[name] > p->max) return "too many " + name;
    compute += p->compute;
  }
  if (compute > m.compute_slices) return "compute slices exceeded";
  for (const auto& [names, max] : m.exclusive) {
    uint32_t n = 0;
    for (const auto& x : names) n += count[x];
    if (n > max) return "exclusive group exceeded";
  }
  return "";
}

// How many instances of `p` fit on an empty GPU (aligned starts: greedy ascending is optimal).
uint32_t EmptyCapacity(const RefModel& m, const RefProfile& p) {
  std::vector<std::pair<std::string, uint32_t>> l;
  for (uint32_t s : p.starts) {
    l.push_back({p.name, s});
    if (!Check(m, l).empty()) l.pop_back();
  }
  return static_cast<uint32_t>(l.size());
}

// A random valid layout built from the reference tables.
std::vector<MigInstanceSnap> RandomLayout(const RefModel& m, std::mt19937& rng, uint32_t& uuid) {
  std::vector<std::pair<std::string, uint32_t>> l;
  std::vector<MigInstanceSnap> out;
  std::uniform_int_distribution<size_t> pick(0, m.profiles.size() - 1);
  for (int tries = 0; tries < 12; ++tries) {
    const RefProfile& p = m.profiles[pick(rng)];
    std::vector<uint32_t> starts(p.starts.begin(), p.starts.end());
    uint32_t s = starts[std::uniform_int_distribution<size_t>(0, starts.size() - 1)(rng)];
    l.push_back({p.name, s});
    if (!Check(m, l).empty()) {
      l.pop_back();
      continue;
    }
    out.push_back({p.name, s, "MIG-" + std::to_string(uuid++), rng() % 4 != 0});
  }
  return out;
}

struct World {
  std::vector<MigPlanNode> nodes;
  std::vector<MigDemand> demand;
};

World RandomWorld(const std::map<std::string, RefModel>& ref, const std::string& model, uint32_t seed) {
  std::mt19937 rng(seed);
  const RefModel& m = ref.at(model);
  World w;
  uint32_t uuid = 1;
  uint32_t n_nodes = 1 + rng() % 3;
  for (uint32_t n = 0; n < n_nodes; ++n) {
    MigPlanNode node{"n" + std::to_string(n), {}};
    uint32_t n_gpus = 1 + rng() % 3;
    for (uint32_t g = 0; g < n_gpus; ++g) {
      MigGpuSnap gs;
      gs.index = g;
      gs.mig_model = model;
      gs.mig_enabled = rng() % 5 != 0;
      gs.dynamic = rng() % 6 != 0;
      gs.busy = rng() % 8 == 0;
      if (gs.mig_enabled) gs.instances = RandomLayout(m, rng, uuid);
      node.gpus.push_back(gs);
    }
    w.nodes.push_back(node);
  }
  uint32_t n_demand = 1 + rng() % 6;
  for (uint32_t d = 0; d < n_demand; ++d) {
    const RefProfile& p = m.profiles[rng() % m.profiles.size()];
    MigDemand md{100 + d, p.name, 1 + static_cast<uint32_t>(rng() % 3), {}};
    if (rng() % 4 == 0) md.nodes = {static_cast<uint32_t>(rng() % n_nodes)};
    w.demand.push_back(md);
  }
  return w;
}

bool Candidate(const MigGpuSnap& g) {
  if (!g.dynamic || g.busy) return false;
  for (const auto& i : g.instances)
    if (!i.free) return false;
  return true;
}

// Checks one plan; returns "" or the first violation.
std::string CheckPlan(const std::map<std::string, RefModel>& ref, const World& w,
                      const std::vector<MigReconfig>& plan) {
  std::set<std::pair<std::string, uint32_t>> seen;
  for (const auto& r : plan) {
    const MigPlanNode* node = nullptr;
    for (const auto& n : w.nodes) node = n.name == r.node ? &n : node;
    if (!node || r.gpu_index >= node->gpus.size()) return "reconfig of an unknown GPU";
    if (!seen.insert({r.node, r.gpu_index}).second) return "GPU reconfigured twice";
    const MigGpuSnap& g = node->gpus[r.gpu_index];
    if (!Candidate(g)) return "touches a busy, static or in-use GPU " + r.node;
    std::vector<std::pair<std::string, uint32_t>> layout;
    for (const auto& d : r.destroy) {
      bool found = false;
      for (const auto& i : g.instances) found = found || i.uuid == d;
      if (!found) return "destroys an unknown instance " + d;
    }
    for (const auto& i : g.instances)
      if (std::find(r.destroy.begin(), r.destroy.end(), i.uuid) == r.destroy.end())
        layout.push_back({i.profile, i.start});
    for (const auto& c : r.create) layout.push_back(c);
    std::string why = Check(ref.at(g.mig_model), layout);
    if (!why.empty()) return "invalid layout on " + r.node + ": " + why;
    for (uint64_t j : r.for_jobs) {
      bool known = false;
      for (const auto& d : w.demand) known = known || d.job_id == j;
      if (!known) return "serves an unknown job";
    }
  }
  return "";
}

// The first demand item: could some allowed node hold it (candidates re-laid from empty, plus
// free instances of the profile elsewhere on the node)? If so, the plan must provide them.
std::string CheckFirstServed(const std::map<std::string, RefModel>& ref, const World& w,
                             const std::vector<MigReconfig>& plan) {
  const MigDemand& d = w.demand[0];
  for (uint32_t n = 0; n < w.nodes.size(); ++n) {
    if (!d.nodes.empty() && d.nodes[0] != n) continue;
    uint32_t possible = 0, provided = 0;
    for (const auto& g : w.nodes[n].gpus) {
      const RefModel& m = ref.at(g.mig_model);
      const MigReconfig* r = nullptr;
      for (const auto& x : plan) r = (x.node == w.nodes[n].name && x.gpu_index == g.index) ? &x : r;
      for (const auto& i : g.instances) {
        bool gone = r && std::find(r->destroy.begin(), r->destroy.end(), i.uuid) != r->destroy.end();
        if (i.free && i.profile == d.profile && !gone) ++provided;
        if (i.free && i.profile == d.profile && !Candidate(g)) ++possible;
      }
      if (r)
        for (const auto& c : r->create) provided += c.first == d.profile;
      if (Candidate(g) && g.mig_enabled) possible += EmptyCapacity(m, *m.Find(d.profile));
    }
    if (possible >= d.count && provided >= d.count) return "";
    if (possible >= d.count) continue;  // maybe another node
  }
  // Not served: fine only when no node could hold it.
  for (uint32_t n = 0; n < w.nodes.size(); ++n) {
    if (!d.nodes.empty() && d.nodes[0] != n) continue;
    uint32_t possible = 0;
    for (const auto& g : w.nodes[n].gpus) {
      const RefModel& m = ref.at(g.mig_model);
      for (const auto& i : g.instances) possible += i.free && i.profile == d.profile && !Candidate(g);
      if (Candidate(g) && g.mig_enabled) possible += EmptyCapacity(m, *m.Find(d.profile));
    }
    if (possible >= d.count)
      return "job " + std::to_string(d.job_id) + " (" + d.profile + " x" + std::to_string(d.count) +
             ") could be served on " + w.nodes[n].name + " but was not";
  }
  return "";
}

// The first demand item as a gang (issue 14: node_count > 1): it is served on enough nodes
// whenever enough nodes could each hold its share, and a plan that re-lays any GPU for it
// provides its share on at least node_count nodes (all or nothing).
std::string CheckGangFirst(const std::map<std::string, RefModel>& ref, const World& w,
                           const std::vector<MigReconfig>& plan) {
  const MigDemand& d = w.demand[0];
  uint32_t can = 0, got = 0;
  for (const auto& node : w.nodes) {
    uint32_t possible = 0, provided = 0;
    for (const auto& g : node.gpus) {
      const RefModel& m = ref.at(g.mig_model);
      const MigReconfig* r = nullptr;
      for (const auto& x : plan) r = (x.node == node.name && x.gpu_index == g.index) ? &x : r;
      for (const auto& i : g.instances) {
        bool gone = r && std::find(r->destroy.begin(), r->destroy.end(), i.uuid) != r->destroy.end();
        if (i.free && i.profile == d.profile && !gone) ++provided;
        if (i.free && i.profile == d.profile && !Candidate(g)) ++possible;
      }
      if (r)
        for (const auto& c : r->create) provided += c.first == d.profile;
      if (Candidate(g) && g.mig_enabled) possible += EmptyCapacity(m, *m.Find(d.profile));
    }
    can += possible >= d.count;
    got += provided >= d.count;
  }
  bool named = false;
  for (const auto& r : plan)
    named = named || std::count(r.for_jobs.begin(), r.for_jobs.end(), d.job_id) > 0;
  if (named && got < d.node_count) return "gang re-laid on some nodes but its share is on too few";
  if (can >= d.node_count && got < d.node_count) return "gang could be served but was not";
  return "";
}

}  // namespace

TEST_CASE("MIG planner property: layouts valid by shared/data/mig, busy never touched, demand served") {
  auto ref = LoadReference();
  REQUIRE(ref.count("A100-SXM4-40GB"));
  uint32_t reconfigs = 0, served_first = 0;
  for (const std::string model : {"A100-SXM4-40GB", "A100-80GB", "H100-80GB", "A30-24GB"}) {
    for (uint32_t seed = 1; seed <= 400; ++seed) {
      World w = RandomWorld(ref, model, seed * 7919u);
      auto plan = PlanMig(w.nodes, w.demand, {.allow_enable_mig = false});
      INFO(model << " seed " << seed * 7919u);
      CHECK(CheckPlan(ref, w, plan) == "");
      CHECK(CheckFirstServed(ref, w, plan) == "");
      auto again = PlanMig(w.nodes, w.demand, {.allow_enable_mig = false});
      REQUIRE(again.size() == plan.size());
      for (size_t i = 0; i < plan.size(); ++i) {
        CHECK(again[i].create == plan[i].create);
        CHECK(again[i].destroy == plan[i].destroy);
      }
      // With mode switches allowed the layouts stay valid too.
      CHECK(CheckPlan(ref, w, PlanMig(w.nodes, w.demand)) == "");
      reconfigs += static_cast<uint32_t>(plan.size());
      for (const auto& r : plan)
        served_first += std::count(r.for_jobs.begin(), r.for_jobs.end(), w.demand[0].job_id) > 0;
    }
  }
  // The random worlds exercise the planner (not a vacuous pass).
  CHECK(reconfigs > 500);
  CHECK(served_first > 300);
}

TEST_CASE("MIG planner property: a gang first in demand is served on enough nodes or not at all") {
  auto ref = LoadReference();
  uint32_t gangs_served = 0, gangs_refused = 0;
  for (const std::string model : {"A100-SXM4-40GB", "A100-80GB", "H100-80GB", "A30-24GB"}) {
    for (uint32_t seed = 1; seed <= 300; ++seed) {
      World w = RandomWorld(ref, model, seed * 104729u);
      w.demand[0].nodes.clear();
      w.demand[0].node_count = 2 + seed % 2;
      auto plan = PlanMig(w.nodes, w.demand, {.allow_enable_mig = false});
      INFO(model << " seed " << seed * 104729u);
      CHECK(CheckPlan(ref, w, plan) == "");
      CHECK(CheckGangFirst(ref, w, plan) == "");
      bool named = false;
      for (const auto& r : plan)
        named = named || std::count(r.for_jobs.begin(), r.for_jobs.end(), w.demand[0].job_id) > 0;
      (named ? gangs_served : gangs_refused) += 1;
    }
  }
  CHECK(gangs_served > 100);
  CHECK(gangs_refused > 100);
}
