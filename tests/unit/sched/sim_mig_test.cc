// tessera-sim's MIG variants and live MIG state (sim/mig.h).
#include <catch2/catch.hpp>

#include <algorithm>

#include "common/mig_profiles.h"
#include "sim/engine.h"
#include "sim/mig.h"

using namespace tessera;

namespace {

ClusterConfig TwoGpuNode() {
  ClusterConfig c;
  NodeConfig n;
  n.name = "n1";
  n.gres_gpus = {{"a100-80gb", 2}};
  c.nodes.push_back(n);
  return c;
}

std::vector<sched::NodeSnap> Snap() {
  sched::NodeSnap n;
  n.name = "n1";
  n.gpus = {{0, "a100-80gb", true, true, ""}, {1, "a100-80gb", true, true, ""}};
  return {n};
}

size_t Count(const sched::NodeSnap& n, const std::string& model) {
  return static_cast<size_t>(std::count_if(n.gpus.begin(), n.gpus.end(),
                                           [&](const sched::GpuSnap& g) { return g.model == model; }));
}

}  // namespace

TEST_CASE("sim MIG: profile memory and useful memory of a job") {
  CHECK(sim::ProfileMemMib("3g.40gb") == 40 * 1024);
  CHECK(sim::ProfileMemMib("1g.10gb+me") == 10 * 1024);
  CHECK(sim::ProfileMemMib("a100") == 0);
  CHECK(sim::ProfileMemMib("1g.gb") == 0);
  sim::TraceJob t;
  t.gpus = 2;
  t.gpu_model = "1g.10gb";
  CHECK(sim::UsefulGpuMemMib(t, 81920) == 2 * 10 * 1024);
  t.gpu_model = "a100";
  CHECK(sim::UsefulGpuMemMib(t, 81920) == 2 * 81920);
  // mig-whole keeps the profile's useful memory while the request becomes a whole GPU
  std::vector<sim::TraceJob> trace{t};
  trace[0].gpu_model = "3g.40gb";
  sim::ApplyMigVariant(sim::MigVariant::kWhole, trace);
  CHECK(trace[0].gpu_model.empty());
  CHECK(sim::UsefulGpuMemMib(trace[0], 81920) == 2 * 40 * 1024);
}

TEST_CASE("sim MIG: static variant cuts each GPU into a valid layout, round-robin") {
  auto nodes = Snap();
  auto layouts = sim::ParseMigLayouts("4g.40gb,3g.40gb;1g.10gb,1g.10gb,2g.20gb");
  REQUIRE(layouts.size() == 2);
  REQUIRE(sim::ApplyMigVariant(TwoGpuNode(), sim::MigVariant::kStatic, layouts, nodes).ok());
  const auto& n = nodes[0];
  CHECK(Count(n, "a100-80gb") == 0);  // never listed whole
  CHECK(Count(n, "4g.40gb") == 1);
  CHECK(Count(n, "3g.40gb") == 1);
  CHECK(Count(n, "1g.10gb") == 2);
  CHECK(Count(n, "2g.20gb") == 1);
  REQUIRE(n.mig_gpus.size() == 2);
  const MigModel* m = FindMigModel(n.mig_gpus[0].mig_model);
  REQUIRE(m != nullptr);
  CHECK(m->memory_mib == 81920);  // a100-80gb, not the 40 GB tables
  for (const auto& g : n.mig_gpus) {
    std::vector<MigPlacement> layout;
    for (const auto& i : g.instances) layout.push_back({i.profile, i.start});
    CHECK(ValidateMigLayout(*m, layout).ok());
    CHECK(g.mig_enabled);
    CHECK_FALSE(g.dynamic);
  }
  for (const auto& g : n.gpus) CHECK(g.mig_uuid.rfind("MIG-", 0) == 0);
}

TEST_CASE("sim MIG: a static layout that does not fit names node and GPU") {
  auto nodes = Snap();
  Status st = sim::ApplyMigVariant(TwoGpuNode(), sim::MigVariant::kStatic,
                                   sim::ParseMigLayouts("7g.80gb,1g.10gb"), nodes);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("n1 GPU 0") != std::string::npos);
}

TEST_CASE("sim MIG: dynamic variant; a reconfiguration takes the GPU out, then lists its instances") {
  auto nodes = Snap();
  REQUIRE(sim::ApplyMigVariant(TwoGpuNode(), sim::MigVariant::kDynamic, {}, nodes).ok());
  auto& n = nodes[0];
  REQUIRE(n.mig_gpus.size() == 2);
  CHECK(n.mig_gpus[1].dynamic);
  CHECK(n.mig_gpus[1].mig_enabled);  // MIG mode on, nothing cut yet
  CHECK(n.gpus.empty());
  sched::MigReconfig r{"n1", 1, {}, {{"3g.40gb", 4}, {"2g.20gb", 0}}, {7}};
  sim::MigLive::Begin(n, r);
  CHECK(n.mig_gpus[1].busy);
  sim::MigLive::Finish(n, r);
  CHECK_FALSE(n.mig_gpus[1].busy);
  CHECK(n.mig_gpus[1].mig_enabled);
  CHECK(Count(n, "3g.40gb") == 1);
  CHECK(Count(n, "2g.20gb") == 1);
  // a job on the new 2g instance marks it busy in both views, and returns it
  std::string uuid;
  for (const auto& g : n.gpus)
    if (g.model == "2g.20gb") uuid = g.mig_uuid;
  sched::NodePlacement p;
  p.node = "n1";
  p.mig_uuids = {uuid};
  sim::MigLive::Use(n, p, true);
  for (const auto& g : n.gpus)
    if (g.mig_uuid == uuid) CHECK_FALSE(g.free);
  for (const auto& i : n.mig_gpus[1].instances)
    if (i.uuid == uuid) CHECK_FALSE(i.free);
  sim::MigLive::Use(n, p, false);
  for (const auto& g : n.gpus)
    if (g.mig_uuid == uuid) CHECK(g.free);
  // a later layout destroys the old instances
  sched::MigReconfig again{"n1", 1, {}, {{"7g.80gb", 0}}, {}};
  for (const auto& i : n.mig_gpus[1].instances) again.destroy.push_back(i.uuid);
  sim::MigLive::Begin(n, again);
  CHECK(n.gpus.empty());
  sim::MigLive::Finish(n, again);
  CHECK(Count(n, "7g.80gb") == 1);
  CHECK(n.gpus.size() == 1);
}

TEST_CASE("sim MIG: a 2-node gang asking a profile no layout offers is re-laid on both and runs") {
  // gpusched (issue 14): two nodes with one dynamic A100 80GB each (MIG mode, no instances yet);
  // the trace's one job asks 2 x 3g.40gb per node on 2 nodes.
  ClusterConfig cfg;
  for (const char* name : {"n1", "n2"}) {
    NodeConfig n;
    n.name = name;
    n.gres_gpus = {{"a100-80gb", 1}};
    cfg.nodes.push_back(n);
  }
  sched::ClusterSnapshot c;
  for (const char* name : {"n1", "n2"}) {
    sched::NodeSnap n;
    n.name = name;
    n.cpus_total = n.cpus_free = 4;
    n.mem_total = n.mem_free = 4000;
    n.partitions = {"p"};
    n.gpus = {{0, "a100-80gb", true, true, ""}};
    c.nodes.push_back(n);
  }
  c.partitions = {{"p", true, 0, -1, -1, 1}};
  REQUIRE(sim::ApplyMigVariant(cfg, sim::MigVariant::kDynamic, {}, c.nodes).ok());
  sim::TraceJob t;
  t.id = 1;
  t.runtime = t.req_time = 100;
  t.gpus = 4;
  t.cpus = 2;
  t.nodes = 2;
  t.gpu_model = "3g.40gb";
  t.user = "u";
  sched::SchedConfig sc;
  auto run = sim::Simulate(c, "p", sc, {t}, "dynamic");
  REQUIRE(run.error.empty());
  CHECK(run.mig_reconfigs == 2);
  REQUIRE(run.jobs.size() == 1);
  CHECK(run.jobs[0].start == sc.mig_reconfig_seconds);
}
