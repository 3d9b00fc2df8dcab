// Issue 14 (gang GPU jobs): CreateStep sends every node of a multi-node GPU job a grant with that
// node's own allocation (its GPU indices, CPUs, memory), never the batch node's. The controller
// with a real store and fake node links, driven on the test thread as its core thread.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "core_driven_controller.h"

using namespace tessera;
using namespace tessera::ctld;
using tessera::ctld::testing::CoreDrivenController;

namespace {

struct TwoGpuNodes : CoreDrivenController {
  TwoGpuNodes()
      : CoreDrivenController(
            "NodeName=n1 NodeAddr=127.0.0.1 Port=7001 CPUs=2 RealMemory=1000 Gres=gpu:a100:2\n"
            "NodeName=n2 NodeAddr=127.0.0.1 Port=7002 CPUs=2 RealMemory=1000 Gres=gpu:a100:2\n"
            "PartitionName=p Nodes=n1,n2 Default=YES State=UP\n") {
    Register("n1", 2);
    Register("n2", 2);
  }

  // `nodes` nodes, one task and `gpus` GPUs on each (tbatch -N<nodes> --ntasks-per-node=1
  // --gpus-per-node=<gpus> [-w <nodelist>]); returns once the job runs.
  uint64_t Submit(uint32_t nodes, uint32_t gpus, const std::string& nodelist = "") {
    JobSpec spec;
    spec.name = "gang";
    TaskGroupSpec g;
    g.name = "main";
    g.count = nodes;
    g.per_task.cpus = 1;
    g.tasks_per_node = 1;
    g.per_node.gpus = gpus;
    spec.task_groups.push_back(g);
    spec.nodes_min = spec.nodes_max = nodes;
    if (!nodelist.empty()) spec.nodelist = nodelist;
    uint64_t id = CoreDrivenController::Submit(spec);
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
