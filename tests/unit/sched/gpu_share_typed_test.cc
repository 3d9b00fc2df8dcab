// Typed GPU shares (issue 14 §3): --gres=mps:a100:50 / shard:h100:2 (Req::share_model) take
// shares only from GPUs of that type; submit refuses a type that no GPU shares that way.
#include <catch2/catch.hpp>

#include "ctld/sched/gpu_share.h"
#include "ctld/sched/scheduler.h"

using namespace tessera;
using namespace tessera::sched;

namespace {

// n1: GPU 0 "a100" (100 MPS percent, no shards), GPU 1 "h100" (100 MPS percent, 4 shards).
ClusterSnapshot Cluster() {
  ClusterSnapshot s;
  s.now = 1000;
  NodeSnap n;
  n.name = "n1";
  n.cpus_total = n.cpus_free = 16;
  n.mem_total = n.mem_free = 16384;
  n.partitions = {"p"};
  n.gpus.push_back({0, "a100", true, true, ""});
  n.gpus.push_back({1, "h100", true, true, ""});
  n.gpu_shares.push_back({0, 100, 0, 0, 0});
  n.gpu_shares.push_back({1, 100, 0, 4, 0});
  s.nodes.push_back(n);
  s.partitions.push_back({"p", true, 0, -1, -1, 1});
  return s;
}

JobSnap Job(uint64_t id, const std::string& type, uint32_t mps, uint32_t shards = 0) {
  JobSnap j;
  j.id = id;
  j.partition = "p";
  j.submit_time = static_cast<int64_t>(id);
  GroupReq g;
  g.name = "main";
  g.per_task.cpus = 1;
  g.per_task.mem_mib = 100;
  g.per_node.mps = mps;
  g.per_node.shards = shards;
  g.per_node.share_model = type;
  j.groups.push_back(g);
  j.time_limit = 600;
  return j;
}

const Decision& D(const CycleResult& r, uint64_t id) {
  for (const auto& d : r.decisions)
    if (d.job_id == id) return d;
  FAIL("no decision for job " << id);
  return r.decisions[0];
}

// The GPU index job `id` shares, or -1 when it did not start.
int64_t SharedGpu(const CycleResult& r, uint64_t id) {
  const Decision& d = D(r, id);
  return d.kind == Decision::Kind::kStart ? d.placement.at(0).share_gpu : -1;
}

}  // namespace

TEST_CASE("typed shares: mps:h100:N takes MPS of the h100 only, mps:N of any GPU") {
  ClusterSnapshot s = Cluster();
  // Untyped: the lowest index (a100) serves. Typed h100: GPU 1, though GPU 0 has room.
  s.pending = {Job(1, "h100", 30)};
  CHECK(SharedGpu(RunCycle(s), 1) == 1);
  s.pending = {Job(1, "", 30)};
  CHECK(SharedGpu(RunCycle(s), 1) == 0);
  // Once the h100's MPS is used up a typed job waits even though the a100 has all of its MPS.
  s.pending = {Job(1, "h100", 80), Job(2, "h100", 40), Job(3, "a100", 40)};
  auto r = RunCycle(s);
  CHECK(SharedGpu(r, 1) == 1);
  CHECK(SharedGpu(r, 2) == -1);
  CHECK(SharedGpu(r, 3) == 0);
}

TEST_CASE("typed shares: shard:a100:N waits when only the h100 has shards; submit says never") {
  ClusterSnapshot s = Cluster();
  s.pending = {Job(1, "h100", 0, 2)};
  CHECK(SharedGpu(RunCycle(s), 1) == 1);
  Status st = CheckSatisfiable(Job(2, "a100", 0, 2), s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message() ==
        "gres/shard:a100 can never be satisfied in partition p: no a100 GPU there is configured "
        "for shards (gres.conf Replicas=N)");
  st = CheckSatisfiable(Job(3, "h100", 0, 5), s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("gres/shard:h100:5 can never be satisfied") == 0);
  CHECK(CheckSatisfiable(Job(4, "h100", 0, 4), s).ok());
  CHECK(CheckSatisfiable(Job(5, "b200", 50), s).message().find("no b200 GPU there") != std::string::npos);
}
