// The order of what reaches a node when a job is cancelled around its launch.
#include <catch2/catch.hpp>

#include "core_driven_controller.h"

using namespace tessera;
using namespace tessera::ctld;
using tessera::ctld::testing::CoreDrivenController;

namespace {

constexpr char kOneNode[] =
    "NodeName=n1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000\n"
    "PartitionName=p Nodes=n1 Default=YES State=UP\n";

JobSpec OneTask() {
  JobSpec spec;
  spec.task_groups.push_back({"main", 1, {1, 0, 0, ""}, 0, {}});
  return spec;
}

}  // namespace

TEST_CASE("a cancel that comes while a job's start is being made durable follows its launch") {
  CoreDrivenController c(kOneNode);
  auto& link = c.Register("n1");
  uint64_t id = c.Submit(OneTask());
  // The cycle marks the job RUNNING at once; its launch waits for the start to be durable.
  c.RunUntil([&] { return c.ctl->jobs().Find(id)->State() == JobState::kRunning; });
  REQUIRE(c.ctl->Cancel(id, CoreDrivenController::Root(), 0).ok());
  c.RunUntil([&] { return link.sent.size() >= 2; });
  // A cancel sent before the launch is dropped by the node (it knows no such job), and the job
  // would run to its end.
  CHECK(link.sent == std::vector<std::string>{"launch " + std::to_string(id),
                                              "signal " + std::to_string(id) + " 0"});
}

TEST_CASE("signals for a launched job go to its node at once") {
  CoreDrivenController c(kOneNode);
  auto& link = c.Register("n1");
  uint64_t id = c.Submit(OneTask());
  c.RunUntil([&] { return !link.sent.empty(); });
  REQUIRE(link.sent == std::vector<std::string>{"launch " + std::to_string(id)});
  REQUIRE(c.ctl->Cancel(id, CoreDrivenController::Root(), 10).ok());  // tcancel -s USR1
  CHECK(link.sent.back() == "signal " + std::to_string(id) + " 10");
}
