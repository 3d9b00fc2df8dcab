// MIG tables and rules, the simulated backend's MIG/XID behaviour, GpuManager, MIG/MPS/RDMA env.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "noded/gpu_backend.h"
#include "noded/gpu_manager.h"
#include "noded/job_env.h"
#include "common/mig_profiles.h"

using namespace tessera;
using namespace tessera::noded;

namespace {

Status Check(const std::string& model, std::vector<MigPlacement> layout, uint32_t driver = 0) {
  const MigModel* m = FindMigModel(model);
  REQUIRE(m != nullptr);
  return ValidateMigLayout(*m, layout, driver);
}

std::string TempDir() {
  char tmpl[] = "/tmp/tessera-mig-XXXXXX";
  return mkdtemp(tmpl);
}

}  // namespace

TEST_CASE("every model's named layouts are accepted and over-full ones rejected") {
  // all-balanced per mig-parted: 2g@0, 1g@2, 1g@3, 3g@4 on the 8-slice GPUs.
  CHECK(Check("a100", {{"2g.10gb", 0}, {"1g.5gb", 2}, {"1g.5gb", 3}, {"3g.20gb", 4}}).ok());
  CHECK(Check("A100-80GB", {{"2g.20gb", 0}, {"1g.10gb", 2}, {"1g.10gb", 3}, {"3g.40gb", 4}}).ok());
  CHECK(Check("NVIDIA H100 80GB HBM3", {{"2g.20gb", 0}, {"1g.10gb", 2}, {"1g.10gb", 3}, {"3g.40gb", 4}}).ok());
  CHECK(Check("h200", {{"2g.35gb", 0}, {"1g.18gb", 2}, {"1g.18gb", 3}, {"3g.71gb", 4}}).ok());
  CHECK(Check("a30", {{"2g.12gb", 0}, {"1g.6gb", 2}, {"1g.6gb", 3}}).ok());
  // 7 x 1g on 8-slice GPUs, the 8th would have no start.
  std::vector<MigPlacement> seven;
  for (uint32_t s = 0; s < 7; ++s) seven.push_back({"1g.10gb", s});
  CHECK(Check("h100", seven).ok());
  seven.push_back({"1g.10gb", 7});
  CHECK_FALSE(Check("h100", seven).ok());
  // Full GPU.
  CHECK(Check("h200", {{"7g.141gb", 0}}).ok());
  CHECK(Check("a30", {{"4g.24gb", 0}}).ok());
  // 4g + 3g: allowed on current drivers, refused before R510.
  CHECK(Check("a100", {{"4g.20gb", 0}, {"3g.20gb", 4}}).ok());
  CHECK_FALSE(Check("a100", {{"4g.20gb", 0}, {"3g.20gb", 4}}, 470).ok());
}

TEST_CASE("NVIDIA's placement rules reject bad starts, overlaps and too many +me") {
  auto st = Check("a100", {{"3g.20gb", 2}});
  CHECK(st.message().find("cannot start at memory slice 2") != std::string::npos);
  st = Check("h100", {{"3g.40gb", 0}, {"2g.20gb", 2}});
  CHECK(st.message().find("overlaps") != std::string::npos);
  CHECK_FALSE(Check("h100", {{"2g.20gb", 6}}).ok());            // 2g starts 0/2/4 only
  CHECK_FALSE(Check("h100", {{"1g.20gb", 1}}).ok());            // double-memory 1g: even starts
  CHECK_FALSE(Check("h100", {{"4g.40gb", 4}}).ok());            // 4g only at 0
  CHECK_FALSE(Check("h100", {{"1g.10gb+me", 0}, {"1g.10gb+me", 1}}).ok());
  CHECK_FALSE(Check("a30", {{"1g.6gb+me", 0}, {"2g.12gb+me", 2}}).ok());  // one media set
  CHECK_FALSE(Check("a30", {{"3g.20gb", 0}}).ok());             // not an A30 profile
  CHECK_FALSE(Check("a30", {{"2g.12gb", 0}, {"2g.12gb", 2}, {"1g.6gb", 3}}).ok());
  CHECK(FindMigModel("tesla-k80") == nullptr);
}

TEST_CASE("automatic placement finds the documented 3-2-1-1 geometry") {
  const MigModel* m = FindMigModel("a100");
  auto placed = PlaceMigProfiles(*m, {}, {"1g.5gb", "2g.10gb", "3g.20gb", "1g.5gb"});
  REQUIRE(placed.ok());
  CHECK(ValidateMigLayout(*m, *placed).ok());
  CHECK_FALSE(PlaceMigProfiles(*m, {{"7g.40gb", 0}}, {"1g.5gb"}).ok());
}

TEST_CASE("simulated backend: MIG layout from gres.conf, reconfiguration, persistence") {
  std::string dir = TempDir();
  std::vector<GpuDecl> decls = {{"h100", 1, 81920, true, "gres.conf:1"}};
  SimGpuOptions o;
  o.mig_enabled = true;
  o.mig_layout = {"3g.40gb@4", "2g.20gb", "1g.10gb"};
  SimulatedGpuBackend b("c", "n1", decls, {o}, dir);
  auto gpus = b.Discover();
  REQUIRE(gpus.ok());
  REQUIRE((*gpus)[0].mig.size() == 3);
  for (const auto& m : (*gpus)[0].mig) CHECK(m.uuid.rfind("MIG-", 0) == 0);
  // A new 3g on top of the existing one is refused; nothing changes.
  CHECK_FALSE(b.ConfigureMig(0, {{"3g.40gb", 0}}, {}).ok());
  CHECK(b.Discover()->at(0).mig.size() == 3);
  // Destroy the 3g@4, create 4 x 1g in its place.
  std::string three = (*gpus)[0].mig[0].uuid;
  REQUIRE(b.ConfigureMig(0, {{"1g.10gb", 4}, {"1g.10gb", 5}, {"1g.10gb", 6}}, {three}).ok());
  CHECK(b.Discover()->at(0).mig.size() == 5);
  // A restarted backend reads the saved layout.
  SimulatedGpuBackend again("c", "n1", decls, {o}, dir);
  CHECK(again.Discover()->at(0).mig.size() == 5);
  // gres.conf: a layout NVIDIA does not allow makes that GPU unhealthy, naming the line
  // (issue 14: the rest of the node keeps working).
  SimGpuOptions bad = o;
  bad.mig_layout = {"4g.40gb@0", "7g.80gb"};
  SimulatedGpuBackend nope("c", "n2", decls, {bad}, "");
  auto r = nope.Discover();
  REQUIRE(r.ok());
  CHECK_FALSE(r->at(0).healthy);
  CHECK(r->at(0).health_reason.find("gres.conf:1") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("gres.conf MIG/MPS keys are parsed per node, bad values name file:line") {
  auto gres = ParseConfigText(
      "NodeName=n[1-2] Name=gpu Type=h100 Count=1 Simulated=yes MigEnabled=yes "
      "MigLayout=3g.40gb,2g.20gb Mps=yes Replicas=4 NumaNode=1\n", "gres.conf");
  REQUIRE(gres.ok());
  auto o = ParseSimGpuOptions(*gres, "n2");
  REQUIRE(o.ok());
  REQUIRE(o->size() == 1);
  CHECK((*o)[0].mig_enabled);
  CHECK((*o)[0].mig_layout == std::vector<std::string>{"3g.40gb", "2g.20gb"});
  CHECK((*o)[0].mps);
  CHECK((*o)[0].replicas == 4);
  CHECK((*o)[0].numa_node == 1);
  CHECK(ParseSimGpuOptions(*gres, "n3")->empty());
  auto bad = ParseConfigText("NodeName=n1 Name=gpu Count=1 Mps=perhaps\n", "gres.conf");
  auto e = ParseSimGpuOptions(*bad, "n1");
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().message().find("gres.conf:1") != std::string::npos);
}

TEST_CASE("XIDs drain only that GPU unless ignored; injection through the spool") {
  std::string dir = TempDir();
  std::vector<GpuDecl> decls = {{"a100", 2, 40960, true, "gres.conf:1"}};
  SimulatedGpuBackend b("c", "n1", decls, {}, dir);
  auto gpus = b.Discover();
  REQUIRE(gpus.ok());
  std::vector<std::string> logs;
  GpuManager mgr(b, *gpus, {13, 31, 43, 45, 68}, [&](const std::string& m) { logs.push_back(m); });
  std::ofstream(dir + "/inject-xid.1") << "31\n";
  mgr.Poll();
  CHECK(mgr.gpus()[1].healthy);
  CHECK(mgr.TakeOutbox().empty());
  std::ofstream(dir + "/inject-xid.1") << "79\n";
  mgr.Poll();
  CHECK(mgr.gpus()[0].healthy);
  CHECK_FALSE(mgr.gpus()[1].healthy);
  CHECK(mgr.gpus()[1].health_reason == "XID 79: GPU has fallen off the bus");
  auto out = mgr.TakeOutbox();
  REQUIRE(out.size() == 1);
  CHECK(out[0].gpu_health().gpu().index() == 1);
  CHECK_FALSE(out[0].gpu_health().gpu().healthy());
  CHECK(out[0].gpu_health().xid() == 79);
  CHECK_FALSE(std::filesystem::exists(dir + "/inject-xid.1"));  // consumed
  std::ofstream(dir + "/inject-xid.0") << "lost\n";
  mgr.Poll();
  CHECK_FALSE(mgr.gpus()[0].healthy);
  std::filesystem::remove_all(dir);
}

TEST_CASE("ConfigureMig is refused when it destroys a slice in use") {
  std::vector<GpuDecl> decls = {{"a30", 1, 24576, true, "gres.conf:1"}};
  SimGpuOptions o;
  o.mig_enabled = true;
  o.mig_layout = {"2g.12gb@0", "2g.12gb@2"};
  SimulatedGpuBackend b("c", "n1", decls, {o});
  auto gpus = b.Discover();
  GpuManager mgr(b, *gpus, {}, [](const std::string&) {});
  tessera::v1::ConfigureMig req;
  req.set_request_id(7);
  req.add_destroy((*gpus)[0].mig[0].uuid);
  auto* c = req.add_create();
  c->set_profile("1g.6gb");
  c->set_placement_start(0);
  mgr.Configure(req, {{(*gpus)[0].mig[0].uuid, 42}});
  auto out = mgr.TakeOutbox();
  REQUIRE(out.size() == 1);
  CHECK_FALSE(out[0].mig_configured().ok());
  CHECK(out[0].mig_configured().error().find("in use by job 42") != std::string::npos);
  CHECK(b.Discover()->at(0).mig.size() == 2);
  mgr.Configure(req, {});
  out = mgr.TakeOutbox();
  REQUIRE(out.size() == 2);
  CHECK(out[0].mig_configured().ok());
  CHECK(out[0].mig_configured().gpu().mig_instances_size() == 2);
}

TEST_CASE("a job on a MIG slice sees only that slice's UUID; MPS and RDMA env") {
  tessera::v1::LaunchJob l;
  l.set_job_id(5);
  auto* a = l.add_alloc();
  a->set_node("n1");
  a->set_cpus(1);
  a->add_mig_uuids("MIG-aaaa");
  NodeFacts node{"n1", "c", {"GPU-0", "GPU-1"}, {"mlx5_0:1", "mlx5_1:1"}};
  auto env = BuildJobEnv(l, node, {"u", "/home/u", "/bin/sh"});
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "MIG-aaaa");
  CHECK(env["SLURM_GPUS_ON_NODE"] == "1");
  CHECK(env["NCCL_IB_HCA"] == "mlx5_0:1,mlx5_1:1");
  CHECK(env["UCX_NET_DEVICES"] == "mlx5_0:1,mlx5_1:1");
  CHECK(env.count("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == 0);
  tessera::v1::LaunchJob m;
  auto* b = m.add_alloc();
  b->set_node("n1");
  b->add_gpu_indices(1);
  b->set_mps_active_thread_percentage(25);
  b->set_mps_pinned_mem_mib(4096);
  env = BuildJobEnv(m, {"n1", "c", {"GPU-0", "GPU-1"}, {}}, {"u", "/home/u", "/bin/sh"});
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "GPU-1");
  CHECK(env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "25");
  CHECK(env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] == "0=4096M");
  CHECK(env.count("NCCL_IB_HCA") == 0);
}
