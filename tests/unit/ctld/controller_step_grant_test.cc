// Issue 14 (gang GPU jobs): CreateStep sends every node of a multi-node GPU job a grant with that
// node's own allocation (its GPU indices, CPUs, memory), never the batch node's. The controller
// with a real store and fake node links, driven on the test thread as its core thread.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "ctld/config_loader.h"
#include "ctld/controller.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {

class GrantLink : public NodeLink {
 public:
  std::vector<Grant> grants;
  void Launch(const JobRecord&, const JobPayload&, int64_t) override {}
  void Signal(uint64_t, int, uint64_t) override {}
  void AckFinished(uint64_t, uint64_t) override {}
  void GrantStep(const Grant& g) override { grants.push_back(g); }
  void ConfigureMig(uint64_t, uint32_t, const std::vector<MigPlacementReq>&,
                    const std::vector<std::string>&) override {}
};

struct TwoGpuNodes {
  TempDir dir;
  SystemClock clock;
  Core core;  // not started: the test thread runs its handlers
  std::unique_ptr<Store> store;
  std::unique_ptr<Controller> ctl;
  std::map<std::string, std::shared_ptr<GrantLink>> links;

  TwoGpuNodes() {
    std::string conf = dir.path + "/tessera.conf";
    std::ofstream(conf) << "ClusterName=t\nSlurmctldHost=localhost\nStateSaveLocation=" << dir.path
                        << "\nNodeName=n1 NodeAddr=127.0.0.1 Port=7001 CPUs=2 RealMemory=1000 "
                           "Gres=gpu:a100:2\nNodeName=n2 NodeAddr=127.0.0.1 Port=7002 CPUs=2 "
                           "RealMemory=1000 Gres=gpu:a100:2\n"
                           "PartitionName=p Nodes=n1,n2 Default=YES State=UP\n";
    auto cfg = LoadConfig(conf);
    INFO(cfg.status().message());
    REQUIRE(cfg.ok());
    auto s = Store::Open(dir.path + "/t.db");
    REQUIRE(s.ok());
    store = std::move(*s);
    auto rec = store->Load();
    REQUIRE(rec.ok());
    ctl = std::make_unique<Controller>(cfg->cluster, cfg->sched, store.get(), &clock, &core);
    REQUIRE(ctl->Start(*rec).ok());
    for (std::string n : {"n1", "n2"}) {
      RegisterInfo info;
      info.node = n;
      info.cpus = 2;
      info.mem_mib = 1000;
      for (uint32_t i = 0; i < 2; ++i) {
        GpuState g;
        g.index = g.minor = i;
        g.uuid = "GPU-" + n + "-" + std::to_string(i);
        g.model = "a100";
        info.gpus.push_back(g);
      }
      links[n] = std::make_shared<GrantLink>();
      REQUIRE(ctl->OnRegister(info, links[n]).ok());
    }
  }

  template <typename Pred>
  void RunUntil(Pred done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done()) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      core.io().run_one_for(std::chrono::milliseconds(20));
    }
  }

  // `nodes` nodes, one task and `gpus` GPUs on each (tbatch -N<nodes> --ntasks-per-node=1
  // --gpus-per-node=<gpus> [-w <nodelist>]).
  uint64_t Submit(uint32_t nodes, uint32_t gpus, const std::string& nodelist = "") {
    JobSpec spec;
    spec.name = "gang";
    spec.script = "#!/bin/sh\nsleep 100\n";
    spec.workdir = "/tmp";
    TaskGroupSpec g;
    g.name = "main";
    g.count = nodes;
    g.per_task.cpus = 1;
    g.tasks_per_node = 1;
    g.per_node.gpus = gpus;
    spec.task_groups.push_back(g);
    spec.nodes_min = spec.nodes_max = nodes;
    if (!nodelist.empty()) spec.nodelist = nodelist;
    Caller root;
    root.admin = true;
    auto draft = ctl->PrepareSubmit(spec, root, 0, "localhost");
    REQUIRE(draft.ok());
    uint64_t id = 0;
    ctl->Submit(std::move(*draft), [&](Result<uint64_t> r) {
      REQUIRE(r.ok());
      id = *r;
    });
    RunUntil([&] { return id != 0; });
    RunUntil([&] { return ctl->jobs().Find(id)->State() == JobState::kRunning; });
    return id;
  }
};

}  // namespace

TEST_CASE("every node's step grant carries that node's own GPUs (gang job, issue 14)") {
  TwoGpuNodes c;
  c.Submit(1, 1, "n2");  // GPU 0 of n2 is busy: the gang job gets GPU 1 there
  uint64_t id = c.Submit(2, 1);
  const JobRecord* j = c.ctl->jobs().Find(id);
  REQUIRE(j->alloc.size() == 2);
  std::map<std::string, std::vector<uint32_t>> want;
  for (const auto& a : j->alloc) want[a.node] = a.gpu_indices;
  REQUIRE(want["n2"] == std::vector<uint32_t>{1});
  REQUIRE(want["n1"] == std::vector<uint32_t>{0});
  Caller root;
  root.admin = true;
  auto reply = c.ctl->CreateStep(id, root, StepRequest{}, "step");
  REQUIRE(reply.ok());
  for (const std::string n : {"n1", "n2"}) {
    INFO(n);
    REQUIRE(c.links[n]->grants.size() == 1);
    const auto& g = c.links[n]->grants[0];
    CHECK(g.job_id == id);
    CHECK(g.alloc.node == n);
    CHECK(g.alloc.gpu_indices == want[n]);
    CHECK(g.alloc.cpus >= 1);
  }
}
