// Placement on MIG instances (issue 14): a GPU in MIG mode is schedulable only as its
// instances, a profile request takes instances, "" and types take whole GPUs only.
#include <catch2/catch.hpp>

#include <algorithm>

#include "ctld/sched/scheduler.h"

using namespace tessera::sched;

namespace {

PartitionSnap Part() {
  PartitionSnap p;
  p.name = "p";
  return p;
}

// A node with GPU 0 whole ("a100") and GPU 1 in MIG mode with `profiles` (one instance each).
NodeSnap MigNode(const std::string& name, const std::vector<std::string>& profiles,
                 bool whole = true) {
  NodeSnap n;
  n.name = name;
  n.cpus_total = n.cpus_free = 16;
  n.mem_total = n.mem_free = 16000;
  n.partitions = {"p"};
  if (whole) n.gpus.push_back({0, "a100", true, true, ""});
  for (size_t i = 0; i < profiles.size(); ++i)
    n.gpus.push_back({1, profiles[i], true, true, "MIG-" + name + "-" + std::to_string(i)});
  return n;
}

JobSnap Job(uint64_t id, uint32_t gpus, const std::string& model, bool exclusive = false) {
  JobSnap j;
  j.id = id;
  j.partition = "p";
  j.submit_time = static_cast<int64_t>(id);
  GroupReq g;
  g.per_task.cpus = 1;
  g.per_task.gpus = gpus;
  g.per_task.gpu_model = model;
  j.groups.push_back(g);
  j.exclusive = exclusive;
  return j;
}

ClusterSnapshot Cluster(std::vector<NodeSnap> nodes, std::vector<JobSnap> jobs) {
  ClusterSnapshot s;
  s.now = 1000;
  s.partitions.push_back(Part());
  s.nodes = std::move(nodes);
  s.pending = std::move(jobs);
  return s;
}

const Decision& D(const CycleResult& r, uint64_t id) {
  return *std::find_if(r.decisions.begin(), r.decisions.end(),
                       [&](const Decision& d) { return d.job_id == id; });
}

}  // namespace

TEST_CASE("a profile request takes a free MIG instance and carries its UUID, not a GPU index") {
  auto r = RunCycle(Cluster({MigNode("n1", {"3g.40gb", "3g.40gb"})}, {Job(1, 1, "3g.40gb")}));
  const Decision& d = D(r, 1);
  REQUIRE(d.kind == Decision::Kind::kStart);
  REQUIRE(d.placement.size() == 1);
  CHECK(d.placement[0].gpu_indices.empty());
  REQUIRE(d.placement[0].mig_uuids.size() == 1);
  CHECK(d.placement[0].mig_uuids[0].rfind("MIG-n1-", 0) == 0);
}

TEST_CASE("two 1g jobs get different instances, a third waits for Resources") {
  auto r = RunCycle(Cluster({MigNode("n1", {"1g.10gb", "1g.10gb", "3g.40gb"}, false)},
                            {Job(1, 1, "1g.10gb"), Job(2, 1, "1g.10gb"), Job(3, 1, "1g.10gb")}));
  REQUIRE(D(r, 1).kind == Decision::Kind::kStart);
  REQUIRE(D(r, 2).kind == Decision::Kind::kStart);
  CHECK(D(r, 1).placement[0].mig_uuids != D(r, 2).placement[0].mig_uuids);
  CHECK(D(r, 3).kind == Decision::Kind::kPending);
  CHECK(D(r, 3).reason == "Resources");
}

TEST_CASE("a whole-GPU request (any or by type) never takes a MIG instance") {
  // GPU 0 whole, GPU 1 sliced: the first whole job gets GPU 0, the second waits.
  auto r = RunCycle(Cluster({MigNode("n1", {"3g.40gb", "3g.40gb"})},
                            {Job(1, 1, ""), Job(2, 1, ""), Job(3, 1, "a100")}));
  REQUIRE(D(r, 1).kind == Decision::Kind::kStart);
  CHECK(D(r, 1).placement[0].gpu_indices == std::vector<uint32_t>{0});
  CHECK(D(r, 1).placement[0].mig_uuids.empty());
  CHECK(D(r, 2).kind == Decision::Kind::kPending);
  CHECK(D(r, 3).kind == Decision::Kind::kPending);
  // Only MIG GPUs free: a whole-GPU job waits, a profile job runs.
  auto r2 = RunCycle(Cluster({MigNode("n1", {"3g.40gb"}, false)}, {Job(1, 2, ""), Job(2, 1, "3g.40gb")}));
  CHECK(D(r2, 1).kind == Decision::Kind::kPending);
  CHECK(D(r2, 2).kind == Decision::Kind::kStart);
}

TEST_CASE("a busy instance is not handed out again") {
  auto n = MigNode("n1", {"3g.40gb", "3g.40gb"}, false);
  n.gpus[0].free = false;
  auto r = RunCycle(Cluster({n}, {Job(1, 1, "3g.40gb"), Job(2, 1, "3g.40gb")}));
  REQUIRE(D(r, 1).kind == Decision::Kind::kStart);
  CHECK(D(r, 1).placement[0].mig_uuids == std::vector<std::string>{"MIG-n1-1"});
  CHECK(D(r, 2).kind == Decision::Kind::kPending);
}

TEST_CASE("exclusive takes every GPU unit of the node, whole GPUs and instances") {
  auto r = RunCycle(Cluster({MigNode("n1", {"1g.10gb", "1g.10gb"})}, {Job(1, 1, "", true)}));
  const Decision& d = D(r, 1);
  REQUIRE(d.kind == Decision::Kind::kStart);
  CHECK(d.placement[0].gpu_indices == std::vector<uint32_t>{0});
  CHECK(d.placement[0].mig_uuids.size() == 2);
}

TEST_CASE("a profile request that no node offers is unsatisfiable, an offered one is not") {
  ClusterSnapshot empty = Cluster({MigNode("n1", {"3g.40gb"}, false)}, {});
  auto bad = CheckSatisfiable(Job(1, 1, "1g.10gb"), empty);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.message().find("gres/gpu:1g.10gb") != std::string::npos);
  CHECK(CheckSatisfiable(Job(2, 1, "3g.40gb"), empty).ok());
  // A whole-GPU request is not satisfiable by MIG instances.
  CHECK_FALSE(CheckSatisfiable(Job(3, 1, ""), empty).ok());
}
