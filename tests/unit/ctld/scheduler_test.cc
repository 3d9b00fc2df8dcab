#include <catch2/catch.hpp>

#include "ctld/sched/scheduler.h"

using namespace tessera;
using namespace tessera::sched;

namespace {
NodeSnap Node(const std::string& name, uint32_t cpus, uint32_t gpus = 0) {
  NodeSnap n;
  n.name = name;
  n.cpus_total = n.cpus_free = cpus;
  n.mem_total = n.mem_free = 1000 * cpus;
  n.partitions = {"p"};
  for (uint32_t i = 0; i < gpus; ++i) n.gpus.push_back({i, "a100", true, true});
  return n;
}
JobSnap Job(uint64_t id, uint32_t tasks, uint32_t cpus, uint32_t nodes_min = 0) {
  JobSnap j;
  j.id = id;
  j.partition = "p";
  j.submit_time = static_cast<int64_t>(id);
  j.groups.push_back({"main", tasks, {cpus, 0, 0, ""}, 0, {}});
  j.nodes_min = nodes_min;
  return j;
}
}  // namespace

TEST_CASE("a job starts only when all its tasks fit at once") {
  ClusterSnapshot s;
  s.nodes = {Node("a", 4), Node("b", 4)};
  s.partitions = {{"p", true, 0}};
  s.pending = {Job(1, 3, 2)};  // 6 cpus: 2 tasks on a, 1 on b
  auto r = RunCycle(s);
  REQUIRE(r.decisions.size() == 1);
  REQUIRE(r.decisions[0].kind == Decision::Kind::kStart);
  CHECK(r.decisions[0].placement.size() == 2);
  s.pending = {Job(2, 5, 2)};  // 10 cpus > 8: nothing is placed
  r = RunCycle(s);
  CHECK(r.decisions[0].kind == Decision::Kind::kPending);
  CHECK(r.decisions[0].reason == "Resources");
}

TEST_CASE("two large gangs never both half-start") {
  ClusterSnapshot s;
  s.nodes = {Node("a", 4), Node("b", 4)};
  s.partitions = {{"p", true, 0}};
  s.pending = {Job(1, 6, 1), Job(2, 6, 1)};
  auto r = RunCycle(s);
  CHECK(r.decisions[0].kind == Decision::Kind::kStart);
  CHECK(r.decisions[1].kind == Decision::Kind::kPending);
}

TEST_CASE("nodes=N spreads tasks over N nodes") {
  ClusterSnapshot s;
  s.nodes = {Node("a", 8), Node("b", 8)};
  s.partitions = {{"p", true, 0}};
  s.pending = {Job(1, 4, 1, 2)};
  auto r = RunCycle(s);
  REQUIRE(r.decisions[0].kind == Decision::Kind::kStart);
  REQUIRE(r.decisions[0].placement.size() == 2);
  CHECK(r.decisions[0].placement[0].tasks == 2);
  CHECK(r.decisions[0].placement[1].tasks == 2);
}

TEST_CASE("GPUs are allocated by index and never twice") {
  ClusterSnapshot s;
  s.nodes = {Node("g", 8, 2)};
  s.partitions = {{"p", true, 0}};
  JobSnap j1 = Job(1, 1, 1);
  j1.groups[0].per_node.gpus = 1;
  JobSnap j2 = j1, j3 = j1;
  j2.id = 2;
  j3.id = 3;
  s.pending = {j1, j2, j3};
  auto r = RunCycle(s);
  REQUIRE(r.decisions[0].kind == Decision::Kind::kStart);
  REQUIRE(r.decisions[1].kind == Decision::Kind::kStart);
  CHECK(r.decisions[0].placement[0].gpu_indices != r.decisions[1].placement[0].gpu_indices);
  CHECK(r.decisions[2].kind == Decision::Kind::kPending);
}

TEST_CASE("requests no node could ever satisfy are named at submit") {
  ClusterSnapshot s;
  s.nodes = {Node("a", 4), Node("b", 4)};
  s.partitions = {{"p", true, 1}};
  auto too_wide = Job(1, 1, 8);
  auto st = CheckSatisfiable(too_wide, s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("CPU") != std::string::npos);
  auto gpu = Job(2, 1, 1);
  gpu.groups[0].per_node.gpus = 1;
  st = CheckSatisfiable(gpu, s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("GPU") != std::string::npos);
  st = CheckSatisfiable(Job(3, 2, 1, 2), s);  // partition MaxNodes=1
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("at most 1") != std::string::npos);
  CHECK(CheckSatisfiable(Job(4, 2, 4), s.partitions[0].max_nodes ? ClusterSnapshot{0, nullptr, s.nodes, {{"p", true, 0}}, {}, {}, {}} : s).ok());
  JobSnap bad_part = Job(5, 1, 1);
  bad_part.partition = "nope";
  CHECK(CheckSatisfiable(bad_part, s).message().find("invalid partition") != std::string::npos);
}

TEST_CASE("the submit probe over many identical nodes answers as over every node") {
  // CheckSatisfiable folds interchangeable GPU-less nodes (issue 20 §2); the answers and the
  // node count it names must not change.
  ClusterSnapshot s;
  for (int i = 1; i <= 1000; ++i) s.nodes.push_back(Node("n" + std::to_string(i), 4));
  s.nodes.push_back(Node("big", 64));
  s.partitions = {{"p", true, 0}};
  CHECK(CheckSatisfiable(Job(1, 1, 64), s).ok());          // only the last, different node fits
  CHECK(CheckSatisfiable(Job(2, 8, 4, 8), s).ok());        // eight small nodes
  CHECK(CheckSatisfiable(Job(3, 1001, 4, 1001), s).ok());  // every node
  auto st = CheckSatisfiable(Job(4, 1002, 1, 1002), s);    // one node more than there are
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("1001 usable nodes") != std::string::npos);
  auto wide = Job(5, 1, 65);
  CHECK_FALSE(CheckSatisfiable(wide, s).ok());
}

TEST_CASE("a down partition and a future begin time give reasons") {
  ClusterSnapshot s;
  s.now = 100;
  s.nodes = {Node("a", 4)};
  s.partitions = {{"p", false, 0}};
  s.pending = {Job(1, 1, 1)};
  CHECK(RunCycle(s).decisions[0].reason == "PartitionDown");
  s.partitions = {{"p", true, 0}};
  s.pending[0].begin_time = 200;
  CHECK(RunCycle(s).decisions[0].reason == "BeginTime");
}
