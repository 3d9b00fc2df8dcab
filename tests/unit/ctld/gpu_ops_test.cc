// Issue 14, GPU operations in the controller: per-GPU drain and resume are durable and told to
// the node; an XID drain survives a restart until an admin resumes it; a node reporting fewer
// GPUs than gres.conf configures is drained with Slurm's reason, and only that drain is lifted
// when the count is right again; which running jobs a failed GPU hits.
#include <catch2/catch.hpp>

#include <fstream>
#include <mutex>

#include "ctld/config_loader.h"
#include "ctld/controller.h"
#include "ctld/gpu_failures.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {

class GpuLink final : public NodeLink {
 public:
  void Launch(const JobRecord&, const JobPayload&, int64_t) override {}
  void Signal(uint64_t, int, uint64_t) override {}
  void AckFinished(uint64_t, uint64_t) override {}
  void GrantStep(const Grant&) override {}
  void ConfigureMig(uint64_t, uint32_t, const std::vector<MigPlacementReq>&,
                    const std::vector<std::string>&) override {}
  void SetGpuDrain(uint32_t gpu, bool drain, const std::string& reason) override {
    std::lock_guard<std::mutex> l(mu);
    told.push_back(std::to_string(gpu) + (drain ? " drain " + reason : " resume"));
  }
  std::mutex mu;
  std::vector<std::string> told;
};

// A controller over a state directory that outlives it (restart = a new Ctld on the same dir).
struct Ctld {
  FakeClock clock;
  Core core;
  std::unique_ptr<Store> store;
  std::unique_ptr<Controller> ctl;

  explicit Ctld(const std::string& dir) {
    std::string conf = dir + "/tessera.conf";
    std::ofstream(conf) << "ClusterName=t\nSlurmctldHost=localhost\nStateSaveLocation=" << dir
                        << "/state\nNodeName=n1 CPUs=2 RealMemory=1024 Gres=gpu:a100:2\n"
                        << "PartitionName=p Nodes=n1 Default=YES State=UP\n";
    std::ofstream(dir + "/gres.conf")
        << "NodeName=n1 Name=gpu Type=a100 Count=2 MemoryMiB=40960 Simulated=yes\n";
    auto loaded = LoadConfig(conf);
    INFO(loaded.status().message());
    REQUIRE(loaded.ok());
    auto s = Store::Open(dir + "/t.db");
    REQUIRE(s.ok());
    store = std::move(*s);
    auto rec = store->Load();
    REQUIRE(rec.ok());
    ctl = std::make_unique<Controller>(loaded->cluster, loaded->sched, store.get(), &clock, &core);
    core.Start();
    REQUIRE(core.Call([&] { return ctl->Start(*rec); }).ok());
  }
  ~Ctld() { core.Stop(); }

  // Registers n1 reporting `gpus` GPUs; `unhealthy`: index -> the node's drain reason.
  RegisterReply Register(std::shared_ptr<GpuLink> link, uint32_t gpus,
                         std::map<uint32_t, std::string> unhealthy = {}) {
    RegisterInfo info;
    info.node = "n1";
    info.cpus = 2;
    info.mem_mib = 1024;
    for (uint32_t i = 0; i < gpus; ++i) {
      GpuState g;
      g.index = i;
      g.model = "a100";
      g.uuid = "GPU-" + std::to_string(i);
      if (unhealthy.count(i)) g.healthy = false, g.health_reason = unhealthy[i];
      info.gpus.push_back(g);
    }
    auto r = core.Call([&] { return ctl->OnRegister(info, link); });
    REQUIRE(r.ok());
    return *r;
  }
  void Disconnect(const std::shared_ptr<GpuLink>& link) {
    core.Call([&] {
      ctl->OnDisconnect("n1", link.get());
      return 0;
    });
  }
  GpuState Gpu(uint32_t i) {
    return core.Call([&] { return ctl->nodes().Find("n1")->gpus.at(i); });
  }
  NodeRuntime Node() {
    return core.Call([&] { return *ctl->nodes().Find("n1"); });
  }
  Status UpdateGpu(uint32_t gpu, const std::string& action, const std::string& reason = "") {
    return core.Call([&] { return ctl->UpdateGpu("n1", gpu, action, reason); });
  }
  void Xid(uint32_t gpu, uint32_t xid) {
    GpuState g = Gpu(gpu);
    g.healthy = false;
    g.health_reason = "XID " + std::to_string(xid) + ": GPU has fallen off the bus";
    core.Call([&] {
      ctl->OnGpuUpdate("n1", g, xid);
      return 0;
    });
  }
};

std::vector<uint32_t> Drained(const RegisterReply& r) {
  std::vector<uint32_t> out;
  for (const auto& d : r.gpu_drains) out.push_back(d.gpu);
  return out;
}

}  // namespace

TEST_CASE("gpu_drain rows are stored, loaded and deleted (migration 5)") {
  TempDir dir;
  auto s = Store::Open(dir.path + "/t.db");
  REQUIRE(s.ok());
  Batch b;
  b.PutGpuDrain({"n1", 3, "XID 79", 42, "node", 0});
  b.PutGpuDrain({"n2", 0, "fan", 43, "admin"});
  REQUIRE((*s)->CommitSync(std::move(b)).ok());
  auto rec = (*s)->Load();
  REQUIRE(rec.ok());
  REQUIRE(rec->gpu_drains.size() == 2);
  CHECK(rec->gpu_drains[0].node == "n1");
  CHECK(rec->gpu_drains[0].gpu == 3);
  CHECK(rec->gpu_drains[0].reason == "XID 79");
  CHECK(rec->gpu_drains[0].reason_time == 42);
  CHECK(rec->gpu_drains[0].origin == "node");
  CHECK(rec->gpu_drains[0].reason_uid == 0);   // who (migration 10, issue 21)
  CHECK(rec->gpu_drains[1].reason_uid == -1);  // unknown
  Batch d;
  d.DeleteGpuDrain("n1", 3);
  REQUIRE((*s)->CommitSync(std::move(d)).ok());
  REQUIRE((*s)->Load()->gpu_drains.size() == 1);
}

TEST_CASE("an admin's GPU drain and resume are durable and told to the node") {
  TempDir dir;
  auto link = std::make_shared<GpuLink>();
  {
    Ctld c(dir.path);
    c.Register(link, 2);
    CHECK_FALSE(c.UpdateGpu(0, "DRAIN").ok());  // a reason is required
    CHECK(c.UpdateGpu(5, "DRAIN", "x").message().find("has no GPU 5") != std::string::npos);
    REQUIRE(c.UpdateGpu(1, "DRAIN", "bad fan").ok());
    CHECK_FALSE(c.Gpu(1).healthy);
    CHECK(c.Gpu(1).health_reason == "bad fan");
    CHECK(c.Gpu(0).healthy);
    CHECK(link->told == std::vector<std::string>{"1 drain bad fan"});
  }
  // Restart: the node (which forgot, e.g. noded restarted too) reports it healthy; it stays
  // drained and the node is told so at registration.
  {
    Ctld c(dir.path);
    auto reply = c.Register(link, 2);
    CHECK_FALSE(c.Gpu(1).healthy);
    CHECK(c.Gpu(1).health_reason == "bad fan");
    CHECK(Drained(reply) == std::vector<uint32_t>{1});
    REQUIRE(c.UpdateGpu(1, "RESUME").ok());
    CHECK(c.Gpu(1).healthy);
    CHECK(link->told.back() == "1 resume");
    c.Disconnect(link);
    // A resume must reach the node: refused while it is not connected.
    auto st = c.UpdateGpu(1, "RESUME");
    CHECK(st.message().find("not connected") != std::string::npos);
  }
  {
    Ctld c(dir.path);
    auto reply = c.Register(link, 2);
    CHECK(c.Gpu(1).healthy);
    CHECK(reply.gpu_drains.empty());
  }
}

TEST_CASE("an XID drain survives a restart until an admin resumes the GPU") {
  TempDir dir;
  auto link = std::make_shared<GpuLink>();
  {
    Ctld c(dir.path);
    c.Register(link, 2);
    c.Xid(0, 79);
    CHECK_FALSE(c.Gpu(0).healthy);
  }
  {
    Ctld c(dir.path);
    // The node restarted meanwhile and rediscovered the GPU healthy: still drained.
    auto reply = c.Register(link, 2);
    CHECK_FALSE(c.Gpu(0).healthy);
    CHECK(c.Gpu(0).health_reason == "XID 79: GPU has fallen off the bus");
    CHECK(Drained(reply) == std::vector<uint32_t>{0});
    // A GPU the node reports drained at registration is recorded too.
    c.Disconnect(link);
    c.Register(link, 2, {{1, "XID 48: double bit ECC error"}});
    REQUIRE(c.UpdateGpu(0, "RESUME").ok());
  }
  {
    Ctld c(dir.path);
    auto reply = c.Register(link, 2);
    CHECK(c.Gpu(0).healthy);
    CHECK_FALSE(c.Gpu(1).healthy);
    CHECK(Drained(reply) == std::vector<uint32_t>{1});
  }
}

TEST_CASE("a node reporting fewer GPUs than configured is drained, and only that drain lifts") {
  TempDir dir;
  auto link = std::make_shared<GpuLink>();
  Ctld c(dir.path);
  c.Register(link, 0);
  CHECK(c.Node().drain);
  CHECK(c.Node().reason == "gres/gpu count reported lower than configured (0 < 2)");
  CHECK_FALSE(c.Node().Schedulable());
  c.Disconnect(link);
  c.Register(link, 2);
  CHECK_FALSE(c.Node().drain);
  CHECK(c.Node().reason.empty());
  // An administrator's drain is not ctld's to lift.
  REQUIRE(c.core.Call([&] { return c.ctl->UpdateNode("n1", "DRAIN", "maintenance"); }).ok());
  c.Disconnect(link);
  c.Register(link, 1);
  CHECK(c.Node().reason == "maintenance");
  c.Disconnect(link);
  c.Register(link, 2);
  CHECK(c.Node().drain);
  CHECK(c.Node().reason == "maintenance");
}

TEST_CASE("a ctld GPU-count drain survives a restart, with its uid and time") {
  TempDir dir;
  auto link = std::make_shared<GpuLink>();
  {
    Ctld c(dir.path);
    c.Register(link, 1);
  }
  Ctld c(dir.path);
  CHECK(c.Node().drain);
  CHECK(c.Node().reason == "gres/gpu count reported lower than configured (1 < 2)");
  // Who and when (sinfo -R USER, TIMESTAMP; issue 21): the controller itself, at the drain.
  CHECK(c.Node().reason_uid == static_cast<int64_t>(geteuid()));
  CHECK(c.Node().reason_time == c.clock.Now());
}

TEST_CASE("the jobs a failed GPU hits: whole, shared or one of its MIG instances, on that node") {
  auto job = [](uint64_t id, JobState st, std::vector<NodeAlloc> alloc) {
    JobRecord j;
    j.job_id = id;
    j.state = static_cast<int>(st);
    j.alloc = std::move(alloc);
    return j;
  };
  NodeAlloc n1_g0{"n1", 1, 0, {0}, 1, {}, 0, 0};
  NodeAlloc n2_g1{"n2", 1, 0, {1}, 1, {}, 0, 0};
  NodeAlloc n2_g0{"n2", 1, 0, {0}, 1, {}, 0, 0};
  NodeAlloc n2_mig{"n2", 1, 0, {}, 1, {"MIG-a"}, 0, 0};
  NodeAlloc n2_mps{"n2", 1, 0, {1}, 1, {}, 50, 0};
  JobRecord gang = job(1, JobState::kRunning, {n1_g0, n2_g1});
  JobRecord other = job(2, JobState::kRunning, {n2_g0});
  JobRecord mig = job(3, JobState::kRunning, {n2_mig});
  JobRecord mps = job(4, JobState::kRunning, {n2_mps});
  JobRecord done = job(5, JobState::kCompleted, {n2_g1});
  std::vector<const JobRecord*> all = {&gang, &other, &mig, &mps, &done};
  CHECK(JobsHoldingGpu(all, "n2", 1, {"MIG-a"}) == std::vector<uint64_t>{1, 3, 4});
  CHECK(JobsHoldingGpu(all, "n2", 0, {}) == std::vector<uint64_t>{2});
  CHECK(JobsHoldingGpu(all, "n1", 1, {}).empty());
  CHECK(GpuFailureMessage("n2", 1, 79, "XID 79: GPU has fallen off the bus") ==
        "GPU 1 of node n2 failed: XID 79: GPU has fallen off the bus");
}
