// GPU sharing in the scheduler (issue 14 §3): gres/mps and gres/shard pools per GPU.
#include <catch2/catch.hpp>

#include "ctld/sched/gpu_share.h"
#include "ctld/sched/scheduler.h"

using namespace tessera;
using namespace tessera::sched;

namespace {

// One node "n1" with `gpus` a100 GPUs, each offering 100 MPS percent and `replicas` shards.
ClusterSnapshot Cluster(uint32_t gpus, uint32_t replicas = 4) {
  ClusterSnapshot s;
  s.now = 1000;
  NodeSnap n;
  n.name = "n1";
  n.cpus_total = n.cpus_free = 16;
  n.mem_total = n.mem_free = 16384;
  n.partitions = {"p"};
  for (uint32_t i = 0; i < gpus; ++i) {
    n.gpus.push_back({i, "a100", true, true, ""});
    n.gpu_shares.push_back({i, 100, 0, replicas, 0});
  }
  s.nodes.push_back(n);
  s.partitions.push_back({"p", true, 0, -1, -1, 1});
  return s;
}

JobSnap Job(uint64_t id, uint32_t mps, uint32_t shards = 0, uint32_t gpus = 0) {
  JobSnap j;
  j.id = id;
  j.partition = "p";
  j.submit_time = static_cast<int64_t>(id);
  GroupReq g;
  g.name = "main";
  g.count = 1;
  g.per_task.cpus = 1;
  g.per_task.mem_mib = 100;
  g.per_node.mps = mps;
  g.per_node.shards = shards;
  g.per_node.gpus = gpus;
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

bool Started(const CycleResult& r, uint64_t id) {
  return D(r, id).kind == Decision::Kind::kStart;
}

}  // namespace

TEST_CASE("two mps:50 jobs share one GPU in the same cycle; a third waits") {
  ClusterSnapshot s = Cluster(1);
  s.pending = {Job(1, 50), Job(2, 50), Job(3, 50)};
  CycleResult r = RunCycle(s);
  REQUIRE(Started(r, 1));
  REQUIRE(Started(r, 2));
  CHECK_FALSE(Started(r, 3));
  const NodePlacement& p = D(r, 1).placement.at(0);
  CHECK(p.share_gpu == 0);
  CHECK(p.mps == 50);
  CHECK(p.gpu_indices.empty());  // not held whole
  CHECK(D(r, 2).placement.at(0).share_gpu == 0);
}

TEST_CASE("a GPU with shares taken in this cycle is not given whole, and a whole GPU has no shares") {
  SECTION("share first: the whole-GPU job takes the other GPU, then nothing is left") {
    ClusterSnapshot s = Cluster(2);
    s.pending = {Job(1, 30), Job(2, 0, 0, 1), Job(3, 0, 0, 1)};
    CycleResult r = RunCycle(s);
    REQUIRE(Started(r, 1));
    REQUIRE(Started(r, 2));
    CHECK(D(r, 1).placement[0].share_gpu == 0);
    CHECK(D(r, 2).placement[0].gpu_indices == std::vector<uint32_t>{1});
    CHECK_FALSE(Started(r, 3));
  }
  SECTION("whole first: the share job pends on a one-GPU node") {
    ClusterSnapshot s = Cluster(1);
    s.pending = {Job(1, 0, 0, 1), Job(2, 10)};
    CycleResult r = RunCycle(s);
    REQUIRE(Started(r, 1));
    CHECK_FALSE(Started(r, 2));
  }
  SECTION("shares in use from earlier (builder marks the GPU not free): whole job waits") {
    ClusterSnapshot s = Cluster(1);
    s.nodes[0].gpus[0].free = false;
    s.nodes[0].gpu_shares[0].mps_used = 50;
    s.pending = {Job(1, 0, 0, 1), Job(2, 50), Job(3, 10)};
    CycleResult r = RunCycle(s);
    CHECK_FALSE(Started(r, 1));
    // Held whole by nobody, shared by a running job: more MPS fits until 100.
    ClusterSnapshot t = Cluster(1);
    t.nodes[0].gpus[0].free = false;
    t.nodes[0].gpu_shares[0].mps_used = 50;
    t.pending = {Job(2, 50), Job(3, 10)};
    CycleResult q = RunCycle(t);
    CHECK(Started(q, 2));
    CHECK_FALSE(Started(q, 3));
  }
  SECTION("a GPU held whole by a running job offers no shares") {
    ClusterSnapshot s = Cluster(1);
    s.nodes[0].gpus[0].free = false;  // held whole (nothing used in its pool)
    s.pending = {Job(1, 10), Job(2, 0, 1)};
    CycleResult r = RunCycle(s);
    CHECK_FALSE(Started(r, 1));
    CHECK_FALSE(Started(r, 2));
  }
}

TEST_CASE("shards: at most Replicas per GPU, and MPS and shards never share one GPU at once") {
  ClusterSnapshot s = Cluster(1, 4);
  s.pending = {Job(1, 0, 3), Job(2, 0, 1), Job(3, 0, 1)};
  CycleResult r = RunCycle(s);
  CHECK(Started(r, 1));
  CHECK(Started(r, 2));
  CHECK_FALSE(Started(r, 3));
  CHECK(D(r, 1).placement[0].shards == 3);
  ClusterSnapshot m = Cluster(1, 4);
  m.pending = {Job(1, 0, 1), Job(2, 20)};
  CycleResult q = RunCycle(m);
  CHECK(Started(q, 1));
  CHECK_FALSE(Started(q, 2));
  // Two GPUs: the MPS job goes to the other GPU, whole GPUs stay free for later shares first.
  ClusterSnapshot two = Cluster(2, 4);
  two.pending = {Job(1, 0, 1), Job(2, 20), Job(3, 0, 1)};
  CycleResult t = RunCycle(two);
  REQUIRE(Started(t, 1));
  REQUIRE(Started(t, 2));
  REQUIRE(Started(t, 3));
  CHECK(D(t, 1).placement[0].share_gpu == 0);
  CHECK(D(t, 2).placement[0].share_gpu == 1);
  CHECK(D(t, 3).placement[0].share_gpu == 0);  // joins the GPU already sharing shards
}

TEST_CASE("per-task shares take from one GPU per node") {
  ClusterSnapshot s = Cluster(2);
  JobSnap j = Job(1, 0);
  j.groups[0].count = 3;
  j.groups[0].per_task.mps = 40;  // 3 x 40 > 100: two tasks fit one GPU
  s.pending = {j};
  CycleResult r = RunCycle(s);
  CHECK_FALSE(Started(r, 1));
  j.groups[0].count = 2;
  s.pending = {j};
  CycleResult q = RunCycle(s);
  REQUIRE(Started(q, 1));
  CHECK(D(q, 1).placement[0].mps == 80);
}

TEST_CASE("submit refuses share requests no GPU could ever hold") {
  ClusterSnapshot empty = Cluster(2, 4);
  CHECK(CheckSatisfiable(Job(1, 100), empty).ok());
  CHECK(CheckSatisfiable(Job(1, 0, 4), empty).ok());
  Status mps = CheckSatisfiable(Job(1, 150), empty);
  CHECK(mps.message() == "gres/mps:150 can never be satisfied in partition p: one GPU offers at "
                         "most 100 MPS percent");
  Status sh = CheckSatisfiable(Job(1, 0, 5), empty);
  CHECK(sh.message() == "gres/shard:5 can never be satisfied in partition p: one GPU offers at "
                        "most 4 shards (gres.conf Replicas=)");
  CHECK(CheckSatisfiable(Job(1, 50, 1), empty).message() ==
        "gres/mps and gres/shard cannot be combined in one job");
  CHECK(CheckSatisfiable(Job(1, 50, 0, 1), empty).message() ==
        "gres/mps cannot be combined with whole GPUs (gres/gpu)");
  ClusterSnapshot none = Cluster(1, 0);
  none.nodes[0].gpu_shares.clear();
  CHECK(CheckSatisfiable(Job(1, 0, 1), none).message() ==
        "gres/shard can never be satisfied in partition p: no GPU there is configured for shards "
        "(gres.conf Replicas=N)");
}

TEST_CASE("a share job that cannot start now is reserved when the shared GPU comes back") {
  ClusterSnapshot s = Cluster(1);
  s.nodes[0].gpus[0].free = false;
  s.nodes[0].gpu_shares[0].mps_used = 100;
  s.nodes[0].cpus_free = 15;
  RunningSnap r;
  r.id = 9;
  r.end_time = s.now + 100;
  r.nodes = {{"n1", 1, 0, 1}};  // the job ending last carries the shared GPU (ctld's builder)
  s.running = {r};
  s.pending = {Job(1, 50)};
  CycleResult c = RunCycle(s);
  REQUIRE_FALSE(Started(c, 1));
  CHECK(D(c, 1).expected_start == s.now + 100);
}
