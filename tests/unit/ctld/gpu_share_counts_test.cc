// Issue 14 (gpunode): gres.conf `Name=mps Count=` gives a GPU an MPS count other than 100; the
// controller's pools, the StillFits recheck and the job's CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
// (N x 100 / count, Slurm's rule) follow it. `Name=shard Count=` fills the shard pools.
#include <catch2/catch.hpp>

#include "common/cluster_config.h"
#include "common/config_file.h"
#include "ctld/gpu_shares.h"
#include "ctld/rpc/convert.h"
#include "ctld/sched_bridge.h"

using namespace tessera;
using namespace tessera::ctld;
using tessera::ctld::rpc::ToProto;

namespace {

ClusterConfig Config() {
  auto lines = ParseConfigText("NodeName=n[1-2] CPUs=8 RealMemory=8000 Gres=gpu:a100:2\n"
                               "PartitionName=p Nodes=n[1-2] Default=YES\n", "tessera.conf");
  auto gres = ParseConfigText("NodeName=n[1-2] Name=gpu Type=a100 Count=2 Simulated=yes\n"
                              "NodeName=n1 Name=mps Count=400\n"
                              "NodeName=n2 Name=shard Count=8\n", "gres.conf");
  REQUIRE(lines.ok());
  REQUIRE(gres.ok());
  auto c = BuildClusterConfig(*lines, *gres);
  INFO(c.status().message());
  REQUIRE(c.ok());
  return *c;
}

}  // namespace

TEST_CASE("Name=mps / Name=shard counts make the configured pools") {
  ClusterConfig c = Config();
  sched::ClusterSnapshot empty = SchedBridge::EmptyCluster(c);
  REQUIRE(empty.nodes.size() == 2);
  REQUIRE(empty.nodes[0].gpu_shares.size() == 2);
  CHECK(empty.nodes[0].gpu_shares[0].mps_total == 200);
  CHECK(empty.nodes[0].gpu_shares[1].mps_total == 200);
  CHECK(empty.nodes[0].gpu_shares[1].shards_total == 0);
  REQUIRE(empty.nodes[1].gpu_shares.size() == 2);
  CHECK(empty.nodes[1].gpu_shares[0].mps_total == 0);
  CHECK(empty.nodes[1].gpu_shares[0].shards_total == 4);
}

TEST_CASE("reported GPUs take the Name=mps count, pools, StillFits and the percent follow it") {
  ClusterConfig c = Config();
  NodeTable nodes(c);
  NodeRuntime& n = *nodes.Find("n1");
  n.gpus.resize(2);
  for (uint32_t i = 0; i < 2; ++i) n.gpus[i].index = i, n.gpus[i].model = "a100";
  ApplyConfiguredShares(n.gpus, c.gpus.at("n1"));
  CHECK(n.gpus[0].mps);
  CHECK(n.gpus[0].mps_count == 200);
  CHECK(MpsTotal(n.gpus[1]) == 200);

  sched::NodePlacement p{"n1", 1, 0, {}, 1, {1}, {}, 0, 150, 0};
  CHECK(SharesStillFit(p, n));  // 150 of 200 fits (it did not when every GPU counted 100)
  auto alloc = SchedBridge::ToAlloc({p}, &nodes);
  REQUIRE(alloc.size() == 1);
  CHECK(alloc[0].mps == 150);
  CHECK(alloc[0].mps_percent == 75);  // 150 x 100 / 200
  v1::NodeAllocation proto;
  ToProto(alloc[0], &proto);
  CHECK(proto.mps_active_thread_percentage() == 75);

  JobRecord j;
  j.job_id = 1;
  j.alloc = alloc;
  nodes.Allocate(j);
  sched::NodeSnap ns;
  ns.gpus = {{0, "a100", true, true, ""}, {1, "a100", true, true, ""}};
  FillSharePools(ns, n);
  REQUIRE(ns.gpu_shares.size() == 2);
  CHECK(ns.gpu_shares[0].mps_total == 200);
  CHECK(ns.gpu_shares[0].mps_used == 150);
  p.mps = 60;
  CHECK_FALSE(SharesStillFit(p, n));  // 150 + 60 > 200
  p.mps = 50;
  CHECK(SharesStillFit(p, n));
}

TEST_CASE("MPS percent is Slurm's N x 100 / count, kept within 1..100") {
  CHECK(MpsPercent(200, 1300) == 15);
  CHECK(MpsPercent(200, 1000) == 20);
  CHECK(MpsPercent(1, 1300) == 1);
  CHECK(MpsPercent(50, 100) == 50);
  CHECK(MpsPercent(0, 100) == 0);
  NodeAlloc a;
  a.mps = 40;
  a.gpu_indices = {0};
  v1::NodeAllocation proto;
  ToProto(a, &proto);  // an older record, or a GPU of count 100: the percent is mps itself
  CHECK(proto.mps_active_thread_percentage() == 40);
}
