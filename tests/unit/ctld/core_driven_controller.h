#pragma once
// A controller with a real store and recording node links, driven on the test thread as its
// core thread (its Core is never started): a test decides when queued core work runs, so it can
// act between a change and its durable callback.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "ctld/config_loader.h"
#include "ctld/controller.h"
#include "test_util.h"

namespace tessera::ctld::testing {

// Records what the controller sends to a node: launches and signals in order ("launch 1",
// "signal 1 0", ...) and step grants.
class RecordingLink : public NodeLink {
 public:
  std::vector<std::string> sent;
  std::vector<Grant> grants;
  void Launch(const JobRecord& job, const JobPayload&, int64_t) override {
    sent.push_back("launch " + std::to_string(job.job_id));
  }
  void Signal(uint64_t id, int sig, uint64_t) override {
    sent.push_back("signal " + std::to_string(id) + " " + std::to_string(sig));
  }
  void AckFinished(uint64_t, uint64_t) override {}
  void GrantStep(const Grant& g) override { grants.push_back(g); }
  void ConfigureMig(uint64_t, uint32_t, const std::vector<MigPlacementReq>&,
                    const std::vector<std::string>&) override {}
};

struct CoreDrivenController {
  TempDir dir;
  SystemClock clock;
  Core core;  // not started: the test thread runs its handlers
  std::unique_ptr<Store> store;
  std::unique_ptr<Controller> ctl;
  std::map<std::string, std::shared_ptr<RecordingLink>> links;

  // `nodes_and_partitions`: the NodeName= and PartitionName= lines of tessera.conf.
  explicit CoreDrivenController(const std::string& nodes_and_partitions) {
    std::string conf = dir.path + "/tessera.conf";
    std::ofstream(conf) << "ClusterName=t\nSlurmctldHost=localhost\nStateSaveLocation=" << dir.path
                        << "\n" << nodes_and_partitions;
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
  }

  // Registers `node` (2 CPUs, 1000 MiB, `gpus` simulated a100s) with a recording link.
  RecordingLink& Register(const std::string& node, uint32_t gpus = 0) {
    RegisterInfo info;
    info.node = node;
    info.cpus = 2;
    info.mem_mib = 1000;
    for (uint32_t i = 0; i < gpus; ++i) {
      GpuState g;
      g.index = g.minor = i;
      g.uuid = "GPU-" + node + "-" + std::to_string(i);
      g.model = "a100";
      info.gpus.push_back(g);
    }
    links[node] = std::make_shared<RecordingLink>();
    REQUIRE(ctl->OnRegister(info, links[node]).ok());
    return *links[node];
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

  // Submits `spec` as root (script, workdir and name filled in when empty); returns its id once
  // the submission is durable.
  uint64_t Submit(JobSpec spec) {
    if (spec.name.empty()) spec.name = "t";
    if (spec.script.empty()) spec.script = "#!/bin/sh\nsleep 100\n";
    if (spec.workdir.empty()) spec.workdir = "/tmp";
    auto draft = ctl->PrepareSubmit(spec, Root(), 0, "localhost");
    REQUIRE(draft.ok());
    uint64_t id = 0;
    ctl->Submit(std::move(*draft), [&](Result<uint64_t> r) {
      REQUIRE(r.ok());
      id = *r;
    });
    RunUntil([&] { return id != 0; });
    return id;
  }

  static Caller Root() {
    Caller root;
    root.admin = true;
    return root;
  }
};

}  // namespace tessera::ctld::testing
