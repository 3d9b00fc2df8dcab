// tcontrol show topology (issue 15): arguments and Slurm's scontrol show topology lines; the
// node's Topology= line in show node; tbatch --segment into the JobSpec.
#include <catch2/catch.hpp>

#include "cli/lib/command.h"
#include "cli/lib/show_format.h"
#include "cli/lib/topology_view.h"
#include "fake_controller.h"

using namespace tessera;
using namespace tessera::cli;

TEST_CASE("show topology: arguments") {
  auto all = ParseShowTopologyArgs({});
  REQUIRE(all.ok());
  CHECK(all->unit().empty());
  CHECK(all->nodes().empty());
  auto named = ParseShowTopologyArgs({"leaf1", "node=n[1-2]"});
  REQUIRE(named.ok());
  CHECK(named->unit() == "leaf1");
  CHECK(named->nodes() == "n[1-2]");
  auto block = ParseShowTopologyArgs({"Block=b2"});
  REQUIRE(block.ok());
  CHECK(block->unit() == "b2");
  auto bad = ParseShowTopologyArgs({"color=red"});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("unknown argument color=red"));
  CHECK_FALSE(ParseShowTopologyArgs({"a", "b"}).ok());
}

TEST_CASE("show topology: Slurm's lines for switches, blocks and aggregated blocks") {
  v1::ShowTopologyResponse resp;
  resp.set_plugin("topology/tree");
  auto* s = resp.add_records();
  s->set_kind("SwitchName");
  s->set_name("s0");
  s->set_link_speed(1);
  s->set_nodes("n[1-4]");
  auto* top = resp.add_records();
  top->set_kind("SwitchName");
  top->set_name("top");
  top->set_level(1);
  top->set_link_speed(100);
  top->set_nodes("n[1-8]");
  top->set_switches("s[0-1]");
  CHECK(FormatTopology(resp) ==
        "SwitchName=s0 Level=0 LinkSpeed=1 Nodes=n[1-4]\n"
        "SwitchName=top Level=1 LinkSpeed=100 Nodes=n[1-8] Switches=s[0-1]\n");
  v1::ShowTopologyResponse blocks;
  auto* b = blocks.add_records();
  b->set_kind("BlockName");
  b->set_name("b1");
  b->set_nodes("n[1-4]");
  b->set_block_size(4);
  auto* a = blocks.add_records();
  a->set_kind("AggregatedBlock");
  a->set_name("b[1-2]");
  a->set_block_index(2);
  a->set_nodes("n[1-8]");
  a->set_block_size(8);
  CHECK(FormatTopology(blocks) ==
        "BlockName=b1 BlockIndex=0 Nodes=n[1-4] BlockSize=4\n"
        "AggregatedBlock=b[1-2] BlockIndex=2 Nodes=n[1-8] BlockSize=8\n");
  v1::ShowTopologyResponse flat;
  flat.set_plugin("topology/flat");
  CHECK(FormatTopology(flat) == "No topology information available (TopologyPlugin=topology/flat)\n");
}

TEST_CASE("show node: the node's leaf switch or block as Slurm's Topology= line") {
  v1::NodeInfo n;
  n.set_name("n3");
  CHECK(FormatNodeDetail(n).find("Topology=") == std::string::npos);
  n.set_topology_unit("leaf2");
  CHECK(FormatNodeDetail(n).find("\n   Topology=default:leaf2\n") != std::string::npos);
}

TEST_CASE("tbatch: --segment (command line and #SBATCH) reaches the JobSpec") {
  using tessera::cli::testing::CommandRun;
  CommandRun r;
  r.files["job.sh"] = "#!/bin/bash\n#SBATCH -N4 --segment=2\nsrun hostname\n";
  REQUIRE(r.Run(RunTbatch, {"job.sh"}) == 0);
  CHECK(r.ctld.SubmitJob_calls.at(0).spec().segment() == 2);
  CommandRun cl;
  cl.files["job.sh"] = "#!/bin/bash\n#SBATCH -N4 --segment=2\nsrun hostname\n";
  REQUIRE(cl.Run(RunTbatch, {"--segment=4", "job.sh"}) == 0);  // the command line wins
  CHECK(cl.ctld.SubmitJob_calls.at(0).spec().segment() == 4);
  CommandRun bad;
  CHECK(bad.Run(RunTbatch, {"--segment=0", "--wrap=x"}) != 0);
  CHECK_THAT(bad.err, Catch::Contains("--segment"));
}
