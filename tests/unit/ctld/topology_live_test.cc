// ctld's topology (issue 15): topology.conf loaded with the config (errors refuse the whole
// config), the scheduler's TopologySnap built once per config, Slurm's show topology records,
// --segment refusals, the job's topology fields kept in its record.
#include <catch2/catch.hpp>

#include <fstream>

#include "core_driven_controller.h"
#include "ctld/jobs/job_codec.h"
#include "ctld/topology_live.h"

using namespace tessera;
using namespace tessera::ctld;
using namespace tessera::ctld::testing;

namespace {

// Writes topology.conf in its own directory; returns the tessera.conf lines that select it.
struct TopoFile {
  ::TempDir dir;
  std::string path;
  TopoFile(const std::string& plugin, const std::string& text) {
    path = dir.path + "/topology.conf";
    std::ofstream(path) << text;
    lines = "TopologyPlugin=" + plugin + "\nTopologyFile=" + path + "\n";
  }
  std::string lines;
};

const char* kBlockNodes =
    "NodeName=n[1-8] CPUs=2 RealMemory=1000\n"
    "PartitionName=p Nodes=n[1-8] Default=YES\n"
    "PartitionName=half Nodes=n[1-3]\n";

JobSpec Spec(uint32_t nodes, uint32_t segment) {
  JobSpec s;
  s.name = "t";
  s.script = "#!/bin/sh\ntrue\n";
  s.workdir = "/tmp";
  s.task_groups.push_back({"main", nodes, {1, 0, 0, ""}, 1, {}});
  s.nodes_min = nodes;
  s.segment = segment;
  return s;
}

std::string Lines(const std::vector<TopologyRecord>& recs) {
  std::string out;
  for (const auto& r : recs) out += FormatTopologyRecord(r) + "\n";
  return out;
}

}  // namespace

TEST_CASE("topology: LoadConfig reads topology.conf; a broken one refuses the config, file:line") {
  TopoFile good("topology/block", "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-7]\n");
  ::TempDir d;
  std::string conf = d.path + "/tessera.conf";
  std::ofstream(conf) << good.lines << kBlockNodes;
  auto cfg = LoadConfig(conf);
  INFO(cfg.status().message());
  REQUIRE(cfg.ok());
  REQUIRE(cfg->cluster->topology);
  CHECK(cfg->cluster->topology->blocks.size() == 2);
  // The unplaced node and the small block are warnings of the load (tessera-ctld prints them).
  bool unplaced = false;
  for (const auto& w : cfg->warnings) unplaced |= w.find("no block): n8") != std::string::npos;
  CHECK(unplaced);

  TopoFile bad("topology/block", "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[4-7]\n");
  std::ofstream(conf) << bad.lines << kBlockNodes;
  auto refused = LoadConfig(conf);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message() ==
        bad.path + ":2: node n4 is in block b2 and already in block b1 (" + bad.path + ":1)");

  std::ofstream(conf) << "TopologyPlugin=topology/tree\n" << kBlockNodes;  // no topology.conf
  auto missing = LoadConfig(conf);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains(d.path + "/topology.conf"));
}

TEST_CASE("topology: the controller builds the scheduler's view once per config, in node order") {
  TopoFile t("topology/tree",
             "SwitchName=s1 Nodes=n[5-8]\nSwitchName=s0 Nodes=n[1-4]\nSwitchName=top Switches=s[0-1]\n");
  CoreDrivenController f(t.lines + kBlockNodes);
  const LiveTopology& live = f.ctl->topology();
  REQUIRE(live.snap);
  CHECK(live.kind == TopologyKind::kTree);
  CHECK(live.snap->node_leaf.size() == 8);
  CHECK(live.snap->switches[static_cast<size_t>(live.snap->node_leaf[0])].name == "s0");  // n1
  CHECK(live.snap->switches[static_cast<size_t>(live.snap->node_leaf[7])].name == "s1");  // n8
  CHECK(live.unit_of_node.at("n6") == "s1");
  // The snapshot the scheduler gets shares it.
  auto snap = SchedBridge::EmptyCluster(f.ctl->config(), live.snap);
  CHECK(snap.topology == live.snap);
}

TEST_CASE("topology: reconfigure applies a changed topology and keeps the jobs") {
  TopoFile t("topology/block", "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\n");
  CoreDrivenController f(t.lines + kBlockNodes);
  uint64_t id = f.Submit(Spec(2, 2));
  auto before = f.ctl->topology().snap;
  std::ofstream(t.path) << "BlockName=x1 Nodes=n[1-2]\nBlockName=x2 Nodes=n[3-4]\n"
                           "BlockName=x3 Nodes=n[5-6]\nBlockName=x4 Nodes=n[7-8]\n";
  auto cfg = LoadConfig(f.ctl->config().path);
  REQUIRE(cfg.ok());
  f.ctl->Reconfigure(cfg->cluster, cfg->sched);
  const LiveTopology& after = f.ctl->topology();
  CHECK(after.snap != before);
  REQUIRE(after.snap->blocks.size() == 4);
  CHECK(after.unit_of_node.at("n3") == "x2");
  CHECK(f.ctl->jobs().Find(id) != nullptr);
}

TEST_CASE("topology: --segment is refused without blocks, when no block can hold it, or when it "
          "does not divide -N") {
  TopoFile t("topology/block", "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\n");
  CoreDrivenController f(t.lines + kBlockNodes);
  auto prep = [&](JobSpec s) { return f.ctl->PrepareSubmit(s, CoreDrivenController::Root(), 0, "h"); };
  CHECK(prep(Spec(4, 2)).ok());
  CHECK(prep(Spec(4, 4)).ok());
  auto big = prep(Spec(8, 8));
  REQUIRE_FALSE(big.ok());
  CHECK(big.status().message() ==
        "--segment=8 can never be placed: no block has 8 nodes in partition p (the largest, b1, "
        "has 4)");
  JobSpec in_half = Spec(4, 4);
  in_half.partition = "half";  // n[1-3]: only 3 nodes of any block
  auto half = prep(in_half);
  REQUIRE_FALSE(half.ok());
  CHECK(half.status().message() ==
        "--segment=4 can never be placed: no block has 4 nodes in partition half (the largest, "
        "b1, has 3)");
  auto odd = prep(Spec(6, 4));
  REQUIRE_FALSE(odd.ok());
  CHECK(odd.status().message() ==
        "--segment=4 does not divide the job's 6 nodes (-N): each segment has 4 nodes");

  CoreDrivenController flat(kBlockNodes);
  auto none = flat.ctl->PrepareSubmit(Spec(2, 2), CoreDrivenController::Root(), 0, "h");
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message() ==
        "--segment=2 needs a block topology (TopologyPlugin=topology/block); this cluster uses "
        "topology/flat");
}

TEST_CASE("topology: show topology records as Slurm prints them (tree)") {
  TopoFile t("topology/tree",
             "SwitchName=s0 Nodes=n[1-4] LinkSpeed=100\nSwitchName=s1 Nodes=n[5-8]\n"
             "SwitchName=top Switches=s[0-1]\n");
  CoreDrivenController f(t.lines + kBlockNodes);
  CHECK(Lines(TopologyRecords(*f.ctl->topology().config, f.ctl->config())) ==
        "SwitchName=s0 Level=0 LinkSpeed=100 Nodes=n[1-4]\n"
        "SwitchName=s1 Level=0 LinkSpeed=1 Nodes=n[5-8]\n"
        "SwitchName=top Level=1 LinkSpeed=1 Nodes=n[1-8] Switches=s[0-1]\n");
}

TEST_CASE("topology: show topology records as Slurm prints them (blocks and aggregates)") {
  TopoFile t("topology/block",
             "BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\nBlockName=b3 Nodes=n[5-6]\n"
             "BlockName=b4 Nodes=n[7-8]\n");
  CoreDrivenController f(t.lines + kBlockNodes);
  // Slurm's block_record.c: aggregates of 2 blocks (b1+b2 at index 4, b3+b4 at 6), then of 4
  // (index 5), ordered by level.
  CHECK(Lines(TopologyRecords(*f.ctl->topology().config, f.ctl->config())) ==
        "BlockName=b1 BlockIndex=0 Nodes=n[1-2] BlockSize=2\n"
        "BlockName=b2 BlockIndex=1 Nodes=n[3-4] BlockSize=2\n"
        "BlockName=b3 BlockIndex=2 Nodes=n[5-6] BlockSize=2\n"
        "BlockName=b4 BlockIndex=3 Nodes=n[7-8] BlockSize=2\n"
        "AggregatedBlock=b[1-2] BlockIndex=4 Nodes=n[1-4] BlockSize=4\n"
        "AggregatedBlock=b[3-4] BlockIndex=6 Nodes=n[5-8] BlockSize=4\n"
        "AggregatedBlock=b[1-4] BlockIndex=5 Nodes=n[1-8] BlockSize=8\n");
}

TEST_CASE("topology: --switches and --segment are kept in the job record; old records decode") {
  JobRecord r;
  r.job_id = 7;
  r.spec.switches = 2;
  r.spec.switches_wait_s = 600;
  r.spec.segment = 4;
  auto back = DecodeRecord(EncodeRecord(r));
  REQUIRE(back.ok());
  CHECK(back->spec.switches == 2);
  CHECK(back->spec.switches_wait_s == 600);
  CHECK(back->spec.segment == 4);
  auto old = DecodeRecord(R"({"job_id": 5, "spec": {"name": "before-issue-15"}})");
  REQUIRE(old.ok());
  CHECK(old->spec.segment == 0);
  CHECK(old->spec.switches == 0);
  sched::JobSnap snap = SchedBridge::ToSnap(*back);
  CHECK(snap.switches == 2);
  CHECK(snap.switches_wait_s == 300);  // Slurm's max_switch_wait caps it
  CHECK(snap.segment == 4);
}

TEST_CASE("topology: TopologyMode reaches the scheduler's partitions") {
  CoreDrivenController f(
      "NodeName=n[1-2] CPUs=2 RealMemory=1000\n"
      "PartitionName=strict Nodes=n1 TopologyMode=required Default=YES\n"
      "PartitionName=loose Nodes=n2\n");
  auto snap = SchedBridge::EmptyCluster(f.ctl->config());
  REQUIRE(snap.partitions.size() == 2);
  CHECK(snap.partitions[0].topology_required);
  CHECK_FALSE(snap.partitions[1].topology_required);
}

TEST_CASE("topology: --switches waits Slurm's max_switch_wait when no time is given, at most that") {
  JobSpec s;
  CHECK(SwitchWaitSeconds(s) == 0);
  s.switches = 2;
  CHECK(SwitchWaitSeconds(s) == 300);
  s.switches_wait_s = 60;
  CHECK(SwitchWaitSeconds(s) == 60);
  s.switches_wait_s = 3600;
  CHECK(SwitchWaitSeconds(s) == 300);
}
