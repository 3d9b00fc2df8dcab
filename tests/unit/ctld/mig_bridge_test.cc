// ctld's side of static MIG (issue 14): the snapshot lists a MIG-mode GPU only as its
// instances, the node table knows which job holds which instance, placements are rechecked,
// MIG layout changes of a GPU in use are refused, and profile requests are checked at submit.
#include <catch2/catch.hpp>

#include <algorithm>

#include "ctld/mig_requests.h"
#include "ctld/nodes/gpu_use.h"
#include "ctld/sched_bridge.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {

ClusterConfig Config() {
  ClusterConfig c;
  NodeConfig n;
  n.name = "g1";
  n.cpus = 16;
  n.real_memory_mib = 16000;
  n.gres_gpus = {{"a100", 2}};
  n.partitions = {"p"};
  c.nodes.push_back(n);
  NodeConfig m = n;
  m.name = "g2";
  c.nodes.push_back(m);
  PartitionConfig p;
  p.name = "p";
  p.nodes = {"g1", "g2"};
  p.is_default = true;
  c.partitions.push_back(p);
  return c;
}

// g1 reports GPU 0 whole and GPU 1 in MIG mode with two 3g.40gb instances.
void Report(NodeTable& t) {
  NodeRuntime* rt = t.Find("g1");
  GpuState whole;
  whole.index = 0;
  whole.model = "a100";
  GpuState mig;
  mig.index = 1;
  mig.model = "a100";
  mig.mig_enabled = true;
  mig.mig.push_back({"3g.40gb", 0, 4, "MIG-aaa", 0, 1});
  mig.mig.push_back({"3g.40gb", 4, 4, "MIG-bbb", 0, 2});
  rt->gpus = {whole, mig};
}

JobRecord Running(uint64_t id, NodeAlloc a) {
  JobRecord j;
  j.job_id = id;
  j.state = static_cast<int>(JobState::kRunning);
  j.partition = "p";
  j.alloc = {std::move(a)};
  return j;
}

sched::JobSnap Asking(const std::string& model, uint32_t gpus) {
  sched::JobSnap j;
  j.id = 9;
  j.partition = "p";
  sched::GroupReq g;
  g.per_task = {1, 0, gpus, model};
  j.groups.push_back(g);
  return j;
}

}  // namespace

TEST_CASE("the snapshot lists a MIG-mode GPU only as its instances, held ones are not free") {
  ClusterConfig cfg = Config();
  NodeTable t(cfg);
  Report(t);
  JobRecord j = Running(7, {"g1", 1, 100, {}, 1, {"MIG-bbb"}});
  t.Allocate(j);
  std::map<uint64_t, JobRecord> jobs{{7, j}};
  std::vector<const JobRecord*> active{&jobs[7]};
  auto s = SchedBridge::Snapshot(cfg, jobs, active, t, 1000, [](uint64_t) { return true; });
  const auto& g = s.nodes[0].gpus;
  REQUIRE(g.size() == 3);
  CHECK(g[0].mig_uuid.empty());
  CHECK(g[0].model == "a100");
  CHECK(g[1].mig_uuid == "MIG-aaa");
  CHECK(g[1].model == "3g.40gb");
  CHECK(g[1].index == 1);
  CHECK(g[1].free);
  CHECK(g[2].mig_uuid == "MIG-bbb");
  CHECK_FALSE(g[2].free);
  REQUIRE(s.running.size() == 1);
  CHECK(s.running[0].nodes[0].gpus == 1);  // the instance counts as one GPU unit
  // The node table knows who holds the instance (shown by tinfo/tcontrol).
  CHECK(t.Find("g1")->gpus[1].mig[1].in_use_by_job == 7);
  t.Release(j);
  CHECK(t.Find("g1")->gpus[1].mig[1].in_use_by_job == 0);
  // A job holding GPU 1 whole (placed before it entered MIG mode) leaves none of its instances free.
  t.Allocate(Running(8, {"g1", 1, 100, {1}, 1, {}}));
  for (const auto& u : SchedBridge::ReportedGpus(*t.Find("g1"), false))
    if (!u.mig_uuid.empty()) CHECK_FALSE(u.free);
}

TEST_CASE("a placement is rechecked against instances held since the snapshot") {
  ClusterConfig cfg = Config();
  NodeTable t(cfg);
  Report(t);
  t.Find("g1")->base = NodeBase::kUp;
  struct NullLink : NodeLink {
    void Launch(const JobRecord&, const JobPayload&, int64_t) override {}
    void Signal(uint64_t, int, uint64_t) override {}
    void AckFinished(uint64_t, uint64_t) override {}
    void GrantStep(const Grant&) override {}
    void ConfigureMig(uint64_t, uint32_t, const std::vector<MigPlacementReq>&,
                      const std::vector<std::string>&) override {}
  };
  t.Find("g1")->link = std::make_shared<NullLink>();
  sched::NodePlacement p;
  p.node = "g1";
  p.cpus = 1;
  p.mig_uuids = {"MIG-aaa"};
  CHECK(SchedBridge::StillFits({p}, t));
  t.Allocate(Running(7, {"g1", 1, 100, {}, 1, {"MIG-aaa"}}));
  CHECK_FALSE(SchedBridge::StillFits({p}, t));
  p.mig_uuids = {"MIG-gone"};
  CHECK_FALSE(SchedBridge::StillFits({p}, t));
  sched::NodePlacement whole;
  whole.node = "g1";
  whole.cpus = 1;
  whole.gpu_indices = {1};  // in MIG mode: never usable whole
  CHECK_FALSE(SchedBridge::StillFits({whole}, t));
}

TEST_CASE("a MIG layout change of a GPU in use is refused naming the job") {
  ClusterConfig cfg = Config();
  NodeTable t(cfg);
  Report(t);
  NodeRuntime& n = *t.Find("g1");
  CHECK(MigChangeAllowed(n, 1).ok());
  JobRecord a = Running(7, {"g1", 1, 100, {}, 1, {"MIG-aaa"}});
  t.Allocate(a);
  Status st = MigChangeAllowed(n, 1);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("job 7") != std::string::npos);
  CHECK(st.message().find("GPU 1 of node g1") != std::string::npos);
  t.Release(a);
  CHECK(MigChangeAllowed(n, 1).ok());
  JobRecord b = Running(8, {"g1", 1, 100, {0}, 1, {}});  // GPU 0 held whole
  t.Allocate(b);
  CHECK(MigChangeAllowed(n, 0).message().find("job 8") != std::string::npos);
  CHECK(MigChangeAllowed(n, 1).ok());
}

TEST_CASE("a profile request is refused at submit only when no node has or may have it") {
  ClusterConfig cfg = Config();
  NodeTable t(cfg);
  // g2 has not reported its GPUs: its a100s may offer any A100 profile.
  CHECK(AsksMigProfile(Asking("1g.10gb", 1)));
  CHECK_FALSE(AsksMigProfile(Asking("a100", 1)));
  CHECK(CheckMigSatisfiable(cfg, t, Asking("1g.10gb", 1)).ok());
  Report(t);  // g1: two 3g.40gb
  GpuState plain;
  plain.model = "a100";
  t.Find("g2")->gpus = {plain};  // g2: one whole GPU, no MIG
  CHECK(CheckMigSatisfiable(cfg, t, Asking("3g.40gb", 2)).ok());
  Status st = CheckMigSatisfiable(cfg, t, Asking("1g.10gb", 1));
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("profile 1g.10gb") != std::string::npos);
  CHECK_FALSE(CheckMigSatisfiable(cfg, t, Asking("3g.40gb", 3)).ok());
}
