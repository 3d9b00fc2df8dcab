// The controller with a real store and a fake node link, driven on the test thread as its core
// thread: the order of what reaches a node.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "common/clock.h"
#include "ctld/config_loader.h"
#include "ctld/controller.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {

// Records what the controller sends to the node, in order: "launch 1", "signal 1 0", ...
class RecordingLink : public NodeLink {
 public:
  std::vector<std::string> sent;
  void Launch(const JobRecord& job, const JobPayload&, int64_t) override {
    sent.push_back("launch " + std::to_string(job.job_id));
  }
  void Signal(uint64_t id, int sig, uint64_t) override {
    sent.push_back("signal " + std::to_string(id) + " " + std::to_string(sig));
  }
  void AckFinished(uint64_t, uint64_t) override {}
  void GrantStep(const Grant&) override {}
  void ConfigureMig(uint64_t, uint32_t, const std::vector<MigPlacementReq>&,
                    const std::vector<std::string>&) override {}
};

struct OneNodeController {
  TempDir dir;
  SystemClock clock;
  Core core;  // not started: the test thread runs its handlers
  std::unique_ptr<Store> store;
  std::unique_ptr<Controller> ctl;
  std::shared_ptr<RecordingLink> link = std::make_shared<RecordingLink>();

  OneNodeController() {
    std::string conf = dir.path + "/tessera.conf";
    std::ofstream(conf) << "ClusterName=t\nSlurmctldHost=localhost\nStateSaveLocation=" << dir.path
                        << "\nNodeName=n1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000\n"
                           "PartitionName=p Nodes=n1 Default=YES State=UP\n";
    auto cfg = LoadConfig(conf);
    REQUIRE(cfg.ok());
    auto s = Store::Open(dir.path + "/t.db");
    REQUIRE(s.ok());
    store = std::move(*s);
    auto rec = store->Load();
    REQUIRE(rec.ok());
    ctl = std::make_unique<Controller>(cfg->cluster, cfg->sched, store.get(), &clock, &core);
    REQUIRE(ctl->Start(*rec).ok());
    RegisterInfo info;
    info.node = "n1";
    info.cpus = 2;
    info.mem_mib = 1000;
    REQUIRE(ctl->OnRegister(info, link).ok());
  }

  // Runs core handlers until `done` holds (or fails the test after 5 s).
  template <typename Pred>
  void RunUntil(Pred done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done()) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      core.io().run_one_for(std::chrono::milliseconds(20));
    }
  }

  uint64_t Submit() {
    JobSpec spec;
    spec.name = "sleeper";
    spec.script = "#!/bin/sh\nsleep 100\n";
    spec.workdir = "/tmp";
    spec.task_groups.push_back({"main", 1, {1, 0, 0, ""}, 0, {}});
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
    return id;
  }
};

}  // namespace

TEST_CASE("a cancel that comes while a job's start is being made durable follows its launch") {
  OneNodeController c;
  uint64_t id = c.Submit();
  // The cycle marks the job RUNNING at once; its launch waits for the start to be durable.
  c.RunUntil([&] { return c.ctl->jobs().Find(id)->State() == JobState::kRunning; });
  Caller root;
  root.admin = true;
  REQUIRE(c.ctl->Cancel(id, root, 0).ok());
  c.RunUntil([&] { return c.link->sent.size() >= 2; });
  // A cancel sent before the launch is dropped by the node (it knows no such job), and the job
  // would run to its end.
  CHECK(c.link->sent == std::vector<std::string>{"launch " + std::to_string(id),
                                                 "signal " + std::to_string(id) + " 0"});
}

TEST_CASE("signals for a launched job go to its node at once") {
  OneNodeController c;
  uint64_t id = c.Submit();
  c.RunUntil([&] { return !c.link->sent.empty(); });
  REQUIRE(c.link->sent == std::vector<std::string>{"launch " + std::to_string(id)});
  Caller root;
  root.admin = true;
  REQUIRE(c.ctl->Cancel(id, root, 10).ok());  // tcancel -s USR1
  CHECK(c.link->sent.back() == "signal " + std::to_string(id) + " 10");
}
