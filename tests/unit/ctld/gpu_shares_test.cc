// GPU sharing in the controller (issue 14 §3): NodeTable keeps shared GPUs apart from whole
// ones, the snapshot carries the pools, StillFits rechecks them, submit sees gres.conf Mps/Replicas.
#include <catch2/catch.hpp>

#include "common/cluster_config.h"
#include "common/config_file.h"
#include "ctld/gpu_shares.h"
#include "ctld/sched_bridge.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {

ClusterConfig Config() {
  auto lines = ParseConfigText("NodeName=n1 CPUs=8 RealMemory=8000 Gres=gpu:a100:2\n"
                               "PartitionName=p Nodes=n1 Default=YES\n", "tessera.conf");
  auto gres = ParseConfigText(
      "NodeName=n1 Name=gpu Type=a100 Count=2 Simulated=yes Mps=yes Replicas=4\n", "gres.conf");
  REQUIRE(lines.ok());
  REQUIRE(gres.ok());
  auto c = BuildClusterConfig(*lines, *gres);
  REQUIRE(c.ok());
  return *c;
}

JobRecord ShareJob(uint64_t id, uint32_t gpu, uint32_t mps, uint32_t shards) {
  JobRecord j;
  j.job_id = id;
  NodeAlloc a;
  a.node = "n1";
  a.cpus = 1;
  a.gpu_indices = {gpu};
  a.mps = mps;
  a.shards = shards;
  j.alloc = {a};
  return j;
}

}  // namespace

TEST_CASE("gres.conf Mps=/Replicas= are read by the controller; bad values name file:line") {
  ClusterConfig c = Config();
  REQUIRE(c.gpus.at("n1").size() == 1);
  CHECK(c.gpus.at("n1")[0].mps);
  CHECK(c.gpus.at("n1")[0].replicas == 4);
  sched::ClusterSnapshot empty = SchedBridge::EmptyCluster(c);
  REQUIRE(empty.nodes[0].gpu_shares.size() == 2);
  CHECK(empty.nodes[0].gpu_shares[1].mps_total == 100);
  CHECK(empty.nodes[0].gpu_shares[1].shards_total == 4);
  auto lines = ParseConfigText("NodeName=n1\nPartitionName=p Nodes=n1\n", "tessera.conf");
  auto gres = ParseConfigText("NodeName=n1 Name=gpu Count=1 Replicas=many\n", "gres.conf");
  auto bad = BuildClusterConfig(*lines, *gres);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("gres.conf:1") != std::string::npos);
}

TEST_CASE("a shared GPU is not held whole; pools and StillFits follow running share jobs") {
  ClusterConfig c = Config();
  NodeTable nodes(c);
  NodeRuntime& n = *nodes.Find("n1");
  n.gpus.resize(2);
  for (uint32_t i = 0; i < 2; ++i) {
    n.gpus[i].index = i;
    n.gpus[i].model = "a100";
    n.gpus[i].mps = true;
    n.gpus[i].replicas = 4;
  }
  JobRecord a = ShareJob(1, 0, 50, 0);
  nodes.Allocate(a);
  CHECK(n.alloc_gpus.empty());
  CHECK(n.alloc_mps.at(0) == 50);
  sched::NodeSnap ns;
  ns.gpus = {{0, "a100", true, true, ""}, {1, "a100", true, true, ""}};
  FillSharePools(ns, n);
  CHECK_FALSE(ns.gpus[0].free);  // shares in use: not free whole
  CHECK(ns.gpus[1].free);
  REQUIRE(ns.gpu_shares.size() == 2);
  CHECK(ns.gpu_shares[0].mps_used == 50);

  sched::NodePlacement whole{"n1", 1, 0, {0}, 1, {1}, {}};
  CHECK_FALSE(SharesStillFit(whole, n));
  whole.gpu_indices = {1};
  CHECK(SharesStillFit(whole, n));
  sched::NodePlacement more{"n1", 1, 0, {}, 1, {1}, {}, 0, 50, 0};
  CHECK(SharesStillFit(more, n));
  more.mps = 60;
  CHECK_FALSE(SharesStillFit(more, n));
  sched::NodePlacement shard{"n1", 1, 0, {}, 1, {1}, {}, 0, 0, 1};
  CHECK_FALSE(SharesStillFit(shard, n));  // GPU 0 shares by MPS now
  shard.share_gpu = 1;
  CHECK(SharesStillFit(shard, n));

  auto alloc = SchedBridge::ToAlloc({more});
  CHECK(alloc[0].gpu_indices == std::vector<uint32_t>{0});
  CHECK(alloc[0].mps == 60);

  nodes.Release(a);
  CHECK(n.alloc_mps.empty());
  CHECK(SharesStillFit({"n1", 1, 0, {0}, 1, {1}, {}}, n));
}

TEST_CASE("running share jobs give their GPU back on the timeline once, at the last end") {
  JobRecord a = ShareJob(1, 0, 50, 0), b = ShareJob(2, 0, 30, 0);
  std::vector<sched::RunningSnap> running(2);
  running[0].id = 1, running[0].end_time = 500, running[0].nodes = {{"n1", 1, 0, 1}};
  running[1].id = 2, running[1].end_time = 900, running[1].nodes = {{"n1", 1, 0, 1}};
  AddShareReleases(running, {{0, &a}, {1, &b}});
  CHECK(running[0].nodes[0].gpus == 0);
  CHECK(running[1].nodes[0].gpus == 1);
}

TEST_CASE("GPUs reported without sharing (NVML) take gres.conf Mps=/Replicas= by index") {
  std::vector<GpuState> gpus(3);
  for (uint32_t i = 0; i < 3; ++i) gpus[i].index = i;
  gpus[2].replicas = 2;  // reported by the node: kept
  GpuDecl a, b;
  a.count = 1, a.mps = true;
  b.count = 2, b.replicas = 8;
  ApplyConfiguredShares(gpus, {a, b});
  CHECK(gpus[0].mps);
  CHECK(gpus[0].replicas == 0);
  CHECK_FALSE(gpus[1].mps);
  CHECK(gpus[1].replicas == 8);
  CHECK(gpus[2].replicas == 2);
}
