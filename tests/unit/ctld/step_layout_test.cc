#include <catch2/catch.hpp>

#include "ctld/step_layout.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {
JobRecord TwoNodeJob() {
  JobRecord j;
  j.job_id = 7;
  j.alloc = {{"a", 4, 100, {}, 2}, {"b", 4, 100, {}, 2}};
  return j;
}
std::vector<uint32_t> Ranks(const StepPlacement& p) { return p.ranks; }
}  // namespace

TEST_CASE("a step defaults to the job's own task layout") {
  auto l = LayoutStep(TwoNodeJob(), {});
  REQUIRE(l.ok());
  REQUIRE(l->size() == 2);
  CHECK(Ranks((*l)[0]) == std::vector<uint32_t>{0, 1});
  CHECK(Ranks((*l)[1]) == std::vector<uint32_t>{2, 3});
}

TEST_CASE("ntasks-per-node and nodes shape the step") {
  auto l = LayoutStep(TwoNodeJob(), {0, 1, 2, 0});
  REQUIRE(l.ok());
  CHECK(Ranks((*l)[0]) == std::vector<uint32_t>{0});
  CHECK(Ranks((*l)[1]) == std::vector<uint32_t>{1});
  l = LayoutStep(TwoNodeJob(), {3, 0, 0, 0});  // 3 tasks over 2 nodes: block, 2 + 1
  REQUIRE(l.ok());
  CHECK(Ranks((*l)[0]) == std::vector<uint32_t>{0, 1});
  CHECK(Ranks((*l)[1]) == std::vector<uint32_t>{2});
  l = LayoutStep(TwoNodeJob(), {1, 0, 0, 0});  // one task uses one node
  REQUIRE(l.ok());
  CHECK(l->size() == 1);
}

TEST_CASE("steps that do not fit the allocation are refused with the reason") {
  auto l = LayoutStep(TwoNodeJob(), {0, 0, 3, 0});
  REQUIRE_FALSE(l.ok());
  CHECK(l.status().message().find("has 2") != std::string::npos);
  l = LayoutStep(TwoNodeJob(), {0, 0, 0, 4});  // 2 tasks x 4 cpus > 4 allocated
  REQUIRE_FALSE(l.ok());
  CHECK(l.status().message().find("CPUs") != std::string::npos);
  l = LayoutStep(TwoNodeJob(), {5, 2, 0, 0});
  REQUIRE_FALSE(l.ok());
}

TEST_CASE("each node's step grant carries that node's own GPUs, not the first node's") {
  JobRecord j;
  j.job_id = 9;
  j.alloc = {{"a", 4, 100, {0}, 1}, {"b", 2, 50, {1}, 1}};
  auto l = LayoutStep(j, {});
  REQUIRE(l.ok());
  REQUIRE(l->size() == 2);
  auto first = StepNodeAlloc(j, (*l)[0].node);
  auto second = StepNodeAlloc(j, (*l)[1].node);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first->node == "a");
  CHECK(first->gpu_indices == std::vector<uint32_t>{0});
  CHECK(second->node == "b");
  CHECK(second->gpu_indices == std::vector<uint32_t>{1});
  CHECK(second->cpus == 2);
  CHECK(second->mem_mib == 50);
  auto none = StepNodeAlloc(j, "c");
  CHECK(none.status().code() == Code::kFailedPrecondition);
  CHECK(none.status().message().find("job 9 has no allocation on node c") != std::string::npos);
}

TEST_CASE("a step on named nodes of the job (srun -w/-x, issue 19)") {
  StepRequest req;
  req.node_names = {"b"};
  auto l = LayoutStep(TwoNodeJob(), req);
  REQUIRE(l.ok());
  REQUIRE(l->size() == 1);
  CHECK((*l)[0].node == "b");
  CHECK(Ranks((*l)[0]) == std::vector<uint32_t>{0, 1});  // b's own task count
  req.node_names = {"z"};
  auto bad = LayoutStep(TwoNodeJob(), req);
  REQUIRE(!bad.ok());
  CHECK(bad.status().message() ==
        "Requested node configuration is not available: node z is not part of job 7");
}
