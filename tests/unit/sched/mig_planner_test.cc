// Unit tests of the dynamic MIG planner (ctld/sched/mig_planner.h): what it may touch, where it
// places, how it groups demand. The independent validity check is mig_property_test.cc.
#include <catch2/catch.hpp>

#include "common/mig_profiles.h"
#include "ctld/sched/mig_planner.h"

using namespace tessera;
using namespace tessera::sched;

namespace {

MigGpuSnap Gpu(uint32_t index, std::vector<MigInstanceSnap> inst, bool dynamic = true,
               const std::string& model = "A100-80GB") {
  MigGpuSnap g;
  g.index = index;
  g.mig_model = model;
  g.mig_enabled = true;
  g.dynamic = dynamic;
  g.instances = std::move(inst);
  return g;
}

MigInstanceSnap I(const std::string& p, uint32_t start, const std::string& uuid, bool free = true) {
  return {p, start, uuid, free};
}

// The layout of `g` after applying `r`.
std::vector<MigPlacement> After(const MigGpuSnap& g, const MigReconfig& r) {
  std::vector<MigPlacement> out;
  for (const auto& i : g.instances)
    if (std::find(r.destroy.begin(), r.destroy.end(), i.uuid) == r.destroy.end())
      out.push_back({i.profile, i.start});
  for (const auto& [p, s] : r.create) out.push_back({p, s});
  return out;
}

}  // namespace

TEST_CASE("MIG planner: a GPU with an instance in use is never touched") {
  // GPU 0: 7 x 1g, one busy; GPU 1: 7 x 1g all free. Demand 3g.40gb.
  std::vector<MigInstanceSnap> a, b;
  for (uint32_t s = 0; s < 7; ++s) {
    a.push_back(I("1g.10gb", s, "MIG-a" + std::to_string(s), s != 3));
    b.push_back(I("1g.10gb", s, "MIG-b" + std::to_string(s)));
  }
  std::vector<MigPlanNode> nodes = {{"n1", {Gpu(0, a), Gpu(1, b)}}};
  auto plan = PlanMig(nodes, {{42, "3g.40gb", 1, {}}});
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].gpu_index == 1);
  CHECK(plan[0].for_jobs == std::vector<uint64_t>{42});
  // Destroys only what the 3g needs (3g@4 takes slices 4-7: the 1g at 4, 5, 6), keeps the rest.
  CHECK(plan[0].destroy == std::vector<std::string>{"MIG-b4", "MIG-b5", "MIG-b6"});
  CHECK(plan[0].create.size() == 1);
  CHECK(ValidateMigLayout(*FindMigModel("A100-80GB"), After(nodes[0].gpus[1], plan[0])).ok());
}

TEST_CASE("MIG planner: busy, static and non-candidate GPUs give no plan") {
  MigGpuSnap busy = Gpu(0, {});
  busy.busy = true;
  MigGpuSnap fixed = Gpu(1, {}, /*dynamic=*/false);
  std::vector<MigPlanNode> nodes = {{"n1", {busy, fixed}}};
  CHECK(PlanMig(nodes, {{1, "2g.20gb", 1, {}}}).empty());
  // A profile the model does not have is not planned.
  std::vector<MigPlanNode> free_node = {{"n1", {Gpu(0, {})}}};
  CHECK(PlanMig(free_node, {{1, "2g.12gb", 1, {}}}).empty());
}

TEST_CASE("MIG planner: a single small instance goes where large profiles stay possible") {
  std::vector<MigPlanNode> nodes = {{"n1", {Gpu(0, {})}}};
  auto plan = PlanMig(nodes, {{7, "1g.10gb", 1, {}}});
  REQUIRE(plan.size() == 1);
  REQUIRE(plan[0].create.size() == 1);
  CHECK(plan[0].create[0].second == 6);  // 4g@0 and 3g@0 remain possible
  CHECK(MigFragmentationScore("A100-80GB", {I("1g.10gb", 6, "")}) == 62);
  CHECK(MigFragmentationScore("A100-80GB", {I("1g.10gb", 4, "")}) == 58);
  CHECK(MigFragmentationScore("A100-80GB", {I("1g.10gb", 0, "")}) == 42);
}

TEST_CASE("MIG planner: like demand groups on one GPU before another opens") {
  std::vector<MigPlanNode> nodes = {{"n1", {Gpu(0, {}), Gpu(1, {})}}};
  auto plan = PlanMig(nodes, {{1, "1g.10gb", 1, {}}, {2, "1g.10gb", 1, {}}, {3, "1g.10gb", 2, {}}});
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].gpu_index == 0);
  CHECK(plan[0].create.size() == 4);
  CHECK(plan[0].for_jobs == std::vector<uint64_t>{1, 2, 3});
}

TEST_CASE("MIG planner: a demand larger than one GPU spreads over the GPUs of one node") {
  std::vector<MigPlanNode> nodes = {{"n1", {Gpu(0, {})}}, {"n2", {Gpu(0, {}), Gpu(1, {})}}};
  auto plan = PlanMig(nodes, {{5, "3g.40gb", 3, {}}});
  REQUIRE(plan.size() == 2);
  CHECK(plan[0].node == "n2");
  CHECK(plan[1].node == "n2");
  // Not served when no node has room for all of it.
  CHECK(PlanMig(nodes, {{5, "3g.40gb", 5, {}}}).empty());
}

TEST_CASE("MIG planner: allowed nodes, mode switch option, determinism") {
  MigGpuSnap whole = Gpu(0, {});
  whole.mig_enabled = false;
  std::vector<MigPlanNode> nodes = {{"n1", {whole}}, {"n2", {Gpu(0, {})}}};
  auto only_n1 = PlanMig(nodes, {{1, "2g.20gb", 1, {0}}});
  REQUIRE(only_n1.size() == 1);
  CHECK(only_n1[0].node == "n1");
  CHECK(only_n1[0].destroy.empty());
  CHECK(PlanMig(nodes, {{1, "2g.20gb", 1, {0}}}, {.allow_enable_mig = false}).empty());
  // GPUs already in MIG mode are preferred to switching one.
  auto any = PlanMig(nodes, {{1, "2g.20gb", 1, {}}});
  REQUIRE(any.size() == 1);
  CHECK(any[0].node == "n2");
  auto again = PlanMig(nodes, {{1, "2g.20gb", 1, {}}});
  CHECK(again[0].create == any[0].create);
}

TEST_CASE("MIG planner: free instances of the asked profile count and are claimed once") {
  std::vector<MigPlanNode> nodes = {
      {"n1", {Gpu(0, {I("2g.20gb", 0, "MIG-x"), I("1g.10gb", 2, "MIG-y")})}}};
  // Job 1 wants 2 x 2g: the existing one plus one new; job 2 wants 1 x 2g: another new one.
  auto plan = PlanMig(nodes, {{1, "2g.20gb", 2, {}}, {2, "2g.20gb", 1, {}}});
  REQUIRE(plan.size() == 1);
  auto layout = After(nodes[0].gpus[0], plan[0]);
  int twos = 0;
  for (const auto& p : layout) twos += p.profile == "2g.20gb";
  CHECK(twos == 3);
  CHECK(ValidateMigLayout(*FindMigModel("A100-80GB"), layout).ok());
  CHECK(std::find(plan[0].destroy.begin(), plan[0].destroy.end(), "MIG-x") == plan[0].destroy.end());
}
