// Dynamic MIG for multi-node gangs (issue 14): the planner serves a gang item (node_count > 1)
// on that many distinct nodes or not at all, and the migplan action turns a gang asking a MIG
// profile no layout offers into reconfigurations on enough nodes at once, then the gang starts
// on every node once the new layouts are there.
#include <catch2/catch.hpp>

#include "common/mig_profiles.h"
#include "ctld/sched/mig_planner.h"
#include "ctld/sched/registry.h"
#include "ctld/sched/sched_config.h"
#include "ctld/sched/scheduler.h"

using namespace tessera;
using namespace tessera::sched;

namespace {

constexpr int64_t kNow = 100000;

// One A100-80GB (GPU 0) in MIG mode with 7 x 1g.10gb; `busy_slot` (if >= 0) is in use.
MigGpuSnap SevenOnes(const std::string& node, bool dynamic = true, int busy_slot = -1) {
  MigGpuSnap g;
  g.index = 0;
  g.mig_model = "A100-80GB";
  g.mig_enabled = true;
  g.dynamic = dynamic;
  for (uint32_t s = 0; s < 7; ++s)
    g.instances.push_back(
        {"1g.10gb", s, "MIG-" + node + "-" + std::to_string(s), static_cast<int>(s) != busy_slot});
  return g;
}

// A node for a cycle: 16 CPUs, GPU 0 as `g` (listed as its instances), or with `layout`
// ((profile, start) pairs) already made.
NodeSnap Node(const std::string& name, MigGpuSnap g) {
  NodeSnap n;
  n.name = name;
  n.cpus_total = n.cpus_free = 16;
  n.mem_total = n.mem_free = 64000;
  n.partitions = {"p"};
  for (const auto& i : g.instances) n.gpus.push_back({0, i.profile, i.free, true, i.uuid});
  n.mig_gpus = {std::move(g)};
  return n;
}

NodeSnap NodeWith(const std::string& name, std::vector<std::pair<std::string, uint32_t>> layout) {
  MigGpuSnap g = SevenOnes(name);
  g.instances.clear();
  for (const auto& [p, s] : layout)
    g.instances.push_back({p, s, "MIG-" + name + "-" + p + "@" + std::to_string(s), true});
  return Node(name, g);
}

// -N `nodes` --ntasks-per-node=1 --gres=gpu:`profile`:`per_node`
JobSnap Gang(uint64_t id, uint32_t nodes, const std::string& profile, uint32_t per_node) {
  JobSnap j;
  j.id = id;
  j.partition = "p";
  j.submit_time = static_cast<int64_t>(id);
  j.time_limit = 3600;
  j.nodes_min = nodes;
  GroupReq g;
  g.count = nodes;
  g.tasks_per_node = 1;
  g.per_task.cpus = 1;
  g.per_task.mem_mib = 100;
  g.per_node.gpus = per_node;
  g.per_node.gpu_model = profile;
  j.groups = {g};
  return j;
}

ClusterSnapshot Snap(std::vector<NodeSnap> nodes, std::vector<JobSnap> jobs) {
  ClusterSnapshot s;
  s.now = kNow;
  s.nodes = std::move(nodes);
  PartitionSnap p;
  p.name = "p";
  s.partitions = {p};
  s.pending = std::move(jobs);
  return s;
}

const Decision& D(const CycleResult& r, uint64_t id) {
  for (const auto& d : r.decisions)
    if (d.job_id == id) return d;
  FAIL("no decision for job " << id);
  return r.decisions[0];
}

}  // namespace

TEST_CASE("MIG planner: a gang item is re-laid on node_count distinct nodes") {
  std::vector<MigPlanNode> nodes = {{"n1", {SevenOnes("n1")}},
                                    {"n2", {SevenOnes("n2", true, 3)}},  // an instance in use
                                    {"n3", {SevenOnes("n3")}}};
  MigDemand d{7, "3g.40gb", 2, {}};
  d.node_count = 2;
  auto plan = PlanMig(nodes, {d});
  REQUIRE(plan.size() == 2);
  CHECK(plan[0].node == "n1");
  CHECK(plan[1].node == "n3");
  for (size_t i = 0; i < 2; ++i) {
    CHECK(plan[i].for_jobs == std::vector<uint64_t>{7});
    CHECK(plan[i].create.size() == 2);  // two 3g.40gb on each node
    const MigGpuSnap& g = nodes[i == 0 ? 0 : 2].gpus[0];
    std::vector<MigPlacement> after;
    for (const auto& inst : g.instances)
      if (std::find(plan[i].destroy.begin(), plan[i].destroy.end(), inst.uuid) == plan[i].destroy.end())
        after.push_back({inst.profile, inst.start});
    for (const auto& [p, s] : plan[i].create) after.push_back({p, s});
    CHECK(ValidateMigLayout(*FindMigModel("A100-80GB"), after).ok());
  }
}

TEST_CASE("MIG planner: a gang that not enough nodes can hold re-lays nothing and claims nothing") {
  std::vector<MigPlanNode> nodes = {{"n1", {SevenOnes("n1")}},
                                    {"n2", {SevenOnes("n2", true, 3)}},
                                    {"n3", {SevenOnes("n3", false)}}};  // static
  MigDemand gang{7, "3g.40gb", 2, {}};
  gang.node_count = 2;  // only n1 can hold 2 x 3g.40gb
  CHECK(PlanMig(nodes, {gang}).empty());
  // A single-node job after it still gets n1: the failed gang left nothing claimed there.
  auto plan = PlanMig(nodes, {gang, {8, "3g.40gb", 2, {}}});
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].node == "n1");
  CHECK(plan[0].for_jobs == std::vector<uint64_t>{8});
}

TEST_CASE("migplan: a 2-node gang asking a profile no layout offers is re-laid on both nodes") {
  SchedConfig cfg;
  auto r = RunCycle(Snap({Node("n1", SevenOnes("n1")), Node("n2", SevenOnes("n2"))},
                         {Gang(1, 2, "3g.40gb", 2)}),
                    cfg, Registry::Builtin());
  REQUIRE(r.status.ok());
  REQUIRE(r.mig_reconfigs.size() == 2);
  CHECK(r.mig_reconfigs[0].node == "n1");
  CHECK(r.mig_reconfigs[1].node == "n2");
  for (const auto& m : r.mig_reconfigs) {
    CHECK(m.for_jobs == std::vector<uint64_t>{1});
    CHECK(m.create.size() == 2);
  }
  const Decision& d = D(r, 1);
  CHECK(d.kind == Decision::Kind::kPending);
  CHECK(d.reason == "MigReconfiguring");
  CHECK(d.expected_start == kNow + cfg.mig_reconfig_seconds);
  CHECK(d.reserved_nodes == std::vector<std::string>{"n1", "n2"});
}

TEST_CASE("migplan: a gang is not re-laid at all when fewer nodes than it needs can hold it") {
  SchedConfig cfg;
  // n2's GPU has an instance in use: only n1 could be re-laid; nothing is, for the 2-node gang.
  NodeSnap n2 = Node("n2", SevenOnes("n2", true, 5));
  auto r = RunCycle(Snap({Node("n1", SevenOnes("n1")), n2}, {Gang(1, 2, "3g.40gb", 2)}), cfg,
                    Registry::Builtin());
  CHECK(r.mig_reconfigs.empty());
  CHECK(D(r, 1).reason != "MigReconfiguring");
}

TEST_CASE("migplan: a gang whose reconfigurations are in flight on two nodes waits for both") {
  SchedConfig cfg;
  NodeSnap n1 = Node("n1", SevenOnes("n1")), n2 = Node("n2", SevenOnes("n2"));
  for (NodeSnap* n : {&n1, &n2}) {
    n->mig_gpus[0].busy = true;
    n->mig_gpus[0].reconfig_for = {1};
    for (auto& g : n->gpus) g.free = false;
  }
  n1.mig_gpus[0].reconfig_until = kNow + 4;
  n2.mig_gpus[0].reconfig_until = kNow + 9;
  auto r = RunCycle(Snap({n1, n2}, {Gang(1, 2, "3g.40gb", 2)}), cfg, Registry::Builtin());
  CHECK(r.mig_reconfigs.empty());
  const Decision& d = D(r, 1);
  CHECK(d.reason == "MigReconfiguring");
  CHECK(d.expected_start == kNow + 9);
  CHECK(d.reserved_nodes == std::vector<std::string>{"n1", "n2"});
}

TEST_CASE("migplan: once both nodes are re-laid the gang starts on both, on the new instances") {
  SchedConfig cfg;
  std::vector<std::pair<std::string, uint32_t>> two3g = {{"3g.40gb", 0}, {"3g.40gb", 4}};
  auto r = RunCycle(Snap({NodeWith("n1", two3g), NodeWith("n2", two3g)}, {Gang(1, 2, "3g.40gb", 2)}),
                    cfg, Registry::Builtin());
  CHECK(r.mig_reconfigs.empty());
  const Decision& d = D(r, 1);
  REQUIRE(d.kind == Decision::Kind::kStart);
  REQUIRE(d.placement.size() == 2);
  for (const auto& p : d.placement) {
    CHECK(p.mig_uuids.size() == 2);
    for (const auto& u : p.mig_uuids) CHECK(u.find("MIG-" + p.node + "-3g.40gb@") == 0);
  }
}
