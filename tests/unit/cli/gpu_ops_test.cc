// Issue 14: tcontrol's per-GPU drain/resume requests and tinfo -R's drained-GPU lines.
#include <catch2/catch.hpp>

#include "fake_controller.h"

namespace tessera::cli {
namespace {

using testing::CommandRun;

TEST_CASE("tcontrol update node Gpu=N State=DRAIN|RESUME is one GPU's drain or resume") {
  CommandRun r;
  REQUIRE(r.Run(RunTcontrol, {"update", "node", "n[1-2]", "Gpu=3", "State=DRAIN",
                              "Reason=ECC errors"}) == 0);
  const auto& d = r.ctld.UpdateNode_calls.at(0);
  CHECK(d.name() == "n[1-2]");
  REQUIRE(d.has_gpu_index());
  CHECK(d.gpu_index() == 3);
  CHECK(d.action() == pb::UpdateNodeRequest::DRAIN);
  CHECK(d.reason() == "ECC errors");
  REQUIRE(r.Run(RunTcontrol, {"update", "NodeName=n1", "gpu=0", "state=resume"}) == 0);
  CHECK(r.ctld.UpdateNode_calls.at(1).has_gpu_index());
  CHECK(r.ctld.UpdateNode_calls.at(1).gpu_index() == 0);
  CHECK(r.ctld.UpdateNode_calls.at(1).action() == pb::UpdateNodeRequest::RESUME);
  // A node's own drain carries no GPU.
  REQUIRE(r.Run(RunTcontrol, {"drain", "n1", "Reason=x"}) == 0);
  CHECK_FALSE(r.ctld.UpdateNode_calls.at(2).has_gpu_index());

  CHECK(r.Run(RunTcontrol, {"update", "node", "n1", "Gpu=1", "State=DRAIN"}) == 1);
  CHECK(r.err.find("reason when draining or downing a GPU") != std::string::npos);
  CHECK(r.Run(RunTcontrol, {"update", "node", "n1", "Gpu=1", "State=DOWN", "Reason=x"}) == 1);
  CHECK(r.err.find("DRAIN or RESUME, not DOWN") != std::string::npos);
  CHECK(r.Run(RunTcontrol, {"update", "node", "n1", "Gpu=x", "State=DRAIN", "Reason=x"}) == 1);
  CHECK(r.ctld.UpdateNode_calls.size() == 3);
  // Gpu= with MigLayout= (and no State=) is still the MIG layout change.
  // (The fake controller does not implement ConfigureMig: the call reaching it is the proof.)
  CHECK(r.Run(RunTcontrol, {"update", "node", "n1", "Gpu=1", "MigLayout=none"}) == 1);
  CHECK(r.err.find("ConfigureMig is not implemented") != std::string::npos);
  CHECK(r.ctld.UpdateNode_calls.size() == 3);
}

TEST_CASE("tinfo -R lists one line per drained GPU with its reason and node") {
  CommandRun r;
  auto* p = r.ctld.ListPartitions_result->add_partitions();
  p->set_name("gpu");
  p->set_nodes("g[1-2]");
  p->set_up(true);
  auto* resp = r.ctld.ListNodes_result.operator->();
  for (const char* name : {"g1", "g2"}) {
    auto* n = resp->add_nodes();
    n->set_name(name);
    n->set_state(pb::NODE_IDLE);
    n->add_partitions("gpu");
    for (uint32_t i = 0; i < 2; ++i) {
      auto* g = n->add_gpus();
      g->set_index(i);
      g->set_healthy(true);
    }
  }
  resp->mutable_nodes(1)->mutable_gpus(1)->set_healthy(false);
  resp->mutable_nodes(1)->mutable_gpus(1)->set_health_reason("XID 79: GPU has fallen off the bus");
  REQUIRE(r.Run(RunTinfo, {"-R"}) == 0);
  CHECK(r.out ==
        "REASON               USER      TIMESTAMP           NODELIST\n"
        "gpu1: XID 79: GPU ha Unknown   Unknown             g2\n");
  // Issue 21: who drained it (by name, the uid where it has none) and when, from ctld's record.
  testing::UseUtc();
  resp->mutable_nodes(1)->mutable_gpus(1)->set_reason_uid(0);
  resp->mutable_nodes(1)->mutable_gpus(1)->set_reason_time(testing::kNow);
  resp->mutable_nodes(0)->mutable_gpus(0)->set_healthy(false);
  resp->mutable_nodes(0)->mutable_gpus(0)->set_health_reason("bad fan");
  resp->mutable_nodes(0)->mutable_gpus(0)->set_reason_uid(4242);
  resp->mutable_nodes(0)->mutable_gpus(0)->set_reason_time(testing::kNow + 60);
  REQUIRE(r.Run(RunTinfo, {"-R", "-h"}) == 0);
  CHECK(r.out ==
        "gpu0: bad fan        4242      2023-11-14T22:14:20 g1\n"
        "gpu1: XID 79: GPU ha root      2023-11-14T22:13:20 g2\n");
}

}  // namespace
}  // namespace tessera::cli
