// Dynamic MIG at the ctld/scheduler seam (ctld/sched_bridge_mig.h): what the planner is shown
// (dynamic per MigStrategy, busy GPUs, instances held by jobs, reconfigurations in flight) and
// the submit-time view that keeps a profile a dynamic GPU could offer satisfiable.
#include <catch2/catch.hpp>

#include "ctld/sched_bridge.h"
#include "ctld/sched_bridge_mig.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {

ClusterConfig Config() {
  auto lines = ParseConfigText(
      "NodeName=d1 CPUs=8 Gres=gpu:h100:2 MigStrategy=dynamic\n"
      "NodeName=s1 CPUs=8 Gres=gpu:h100:1\n"
      "PartitionName=p Nodes=d1,s1 Default=YES\n",
      "tessera.conf");
  REQUIRE(lines.ok());
  auto c = BuildClusterConfig(*lines, {});
  REQUIRE(c.ok());
  return *c;
}

GpuState MigGpu(uint32_t index, std::vector<MigState> mig) {
  GpuState g;
  g.index = index;
  g.model = "h100";
  g.mig_enabled = true;
  g.mig = std::move(mig);
  return g;
}

}  // namespace

TEST_CASE("FillMigGpus: dynamic per MigStrategy, held instances not free, in-flight GPUs busy") {
  ClusterConfig cfg = Config();
  NodeTable nodes(cfg);
  nodes.Find("d1")->gpus = {MigGpu(0, {{"3g.40gb", 0, 4, "MIG-a", 0, 1}, {"3g.40gb", 4, 4, "MIG-b", 0, 2}}),
                            MigGpu(1, {{"7g.80gb", 0, 8, "MIG-c", 0, 1}})};
  nodes.Find("s1")->gpus = {MigGpu(0, {{"7g.80gb", 0, 8, "MIG-s", 0, 1}})};
  JobRecord running;
  running.job_id = 5;
  NodeAlloc a;
  a.node = "d1";
  a.mig_uuids = {"MIG-b"};
  running.alloc = {a};
  MigInFlight in_flight;
  in_flight.Start("d1", 1, {1234, {9}});
  auto snap = SchedBridge::EmptyCluster(cfg);
  snap.now = 1000;
  FillMigGpus(snap, cfg, nodes, {&running}, in_flight);
  const auto& d1 = snap.nodes[0];
  REQUIRE(d1.mig_gpus.size() == 2);
  CHECK(d1.mig_gpus[0].mig_model == "H100-80GB");
  CHECK(d1.mig_gpus[0].dynamic);
  CHECK(d1.mig_gpus[0].instances[0].free);
  CHECK_FALSE(d1.mig_gpus[0].instances[1].free);  // held by job 5
  CHECK_FALSE(d1.mig_gpus[0].busy);
  CHECK(d1.mig_gpus[1].busy);
  CHECK(d1.mig_gpus[1].reconfig_until == 1234);
  CHECK(d1.mig_gpus[1].reconfig_for == std::vector<uint64_t>{9});
  for (const auto& u : d1.gpus)
    if (u.index == 1) CHECK_FALSE(u.free);
  REQUIRE(snap.nodes[1].mig_gpus.size() == 1);
  CHECK_FALSE(snap.nodes[1].mig_gpus[0].dynamic);
  // A refused GPU cools down: busy until then.
  in_flight.Finish("d1", 1);
  in_flight.Refused("d1", 1, 1060);
  auto again = SchedBridge::EmptyCluster(cfg);
  again.now = 1000;
  FillMigGpus(again, cfg, nodes, {}, in_flight);
  CHECK(again.nodes[0].mig_gpus[1].busy);
  CHECK(again.nodes[0].mig_gpus[1].reconfig_until == 0);
}

TEST_CASE("DynamicMigCluster: a profile a dynamic GPU can offer becomes satisfiable at submit") {
  ClusterConfig cfg = Config();
  NodeTable nodes(cfg);
  auto job = [](const std::string& profile, uint32_t count) {
    tessera::sched::JobSnap j;
    j.id = 1;
    j.partition = "p";
    tessera::sched::GroupReq g;
    g.per_task.cpus = 1;
    g.per_task.gpus = count;
    g.per_task.gpu_model = profile;
    j.groups = {g};
    return j;
  };
  auto empty = SchedBridge::EmptyCluster(cfg);
  CHECK_FALSE(tessera::sched::CheckSatisfiable(job("2g.20gb", 1), empty).ok());
  auto dyn = DynamicMigCluster(empty, cfg, nodes, "2g.20gb");
  CHECK(tessera::sched::CheckSatisfiable(job("2g.20gb", 1), dyn).ok());
  CHECK(tessera::sched::CheckSatisfiable(job("2g.20gb", 6), dyn).ok());         // 3 per H100 x 2
  CHECK_FALSE(tessera::sched::CheckSatisfiable(job("2g.20gb", 7), dyn).ok());   // one node only
  auto a30 = DynamicMigCluster(empty, cfg, nodes, "2g.12gb");                   // an A30 profile
  CHECK_FALSE(tessera::sched::CheckSatisfiable(job("2g.12gb", 1), a30).ok());
}
