// topology.conf (issue 15): Slurm's topology/tree and topology/block forms, errors with
// file:line, warnings for unplaced nodes and unknown keys.
#include <catch2/catch.hpp>

#include "common/hostlist.h"
#include "common/topology_config.h"
#include "tests/unit/common/temp_dir.h"

namespace tessera {
namespace {

std::vector<std::string> Nodes(const std::string& expr) { return *ExpandHostlist(expr); }

Result<TopologyConfig> Tree(const std::string& text, const std::string& nodes = "n[0-7]") {
  return ParseTopologyConfig(text, "topology.conf", TopologyKind::kTree, Nodes(nodes));
}
Result<TopologyConfig> Block(const std::string& text, const std::string& nodes = "n[0-7]") {
  return ParseTopologyConfig(text, "topology.conf", TopologyKind::kBlock, Nodes(nodes));
}
std::string Error(const Result<TopologyConfig>& r) {
  REQUIRE_FALSE(r.ok());
  return r.status().message();
}

}  // namespace

TEST_CASE("TopologyPlugin names") {
  CHECK(*ParseTopologyPlugin("topology/tree") == TopologyKind::kTree);
  CHECK(*ParseTopologyPlugin("Topology/Block") == TopologyKind::kBlock);
  CHECK(*ParseTopologyPlugin("topology/flat") == TopologyKind::kFlat);
  CHECK(*ParseTopologyPlugin("topology/default") == TopologyKind::kFlat);
  CHECK(*ParseTopologyPlugin("") == TopologyKind::kFlat);
  auto bad = ParseTopologyPlugin("topology/torus");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("topology/torus") &&
                                         Catch::Contains("topology/tree"));
  CHECK(std::string(TopologyPluginName(TopologyKind::kBlock)) == "topology/block");
}

TEST_CASE("tree: Slurm's example with a spine, hostlists and LinkSpeed") {
  auto t = Tree(
      "# leaves\n"
      "SwitchName=s0 Nodes=n[0-2] LinkSpeed=100\n"
      "switchname=s1 nodes=n[3,5-7]\n"
      "SwitchName=s3 Switches=s[0-1]\n");
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  CHECK(t->kind == TopologyKind::kTree);
  CHECK(t->path == "topology.conf");
  REQUIRE(t->switches.size() == 3);
  CHECK(t->switches[0].nodes == Nodes("n[0-2]"));
  CHECK(t->switches[0].link_speed == 100);
  CHECK(t->switches[0].where == "topology.conf:2");
  CHECK(t->switches[1].nodes == Nodes("n[3,5-7]"));
  CHECK(t->switches[1].link_speed == 0);
  CHECK(t->switches[2].switches == std::vector<std::string>{"s0", "s1"});
  CHECK(t->switches[2].nodes.empty());
  // n4 has no leaf: a warning naming it, never silence.
  REQUIRE(t->warnings.size() == 1);
  CHECK(t->warnings[0] ==
        "topology.conf: 1 node(s) of tessera.conf have no place in the topology (no leaf "
        "switch): n4");
}

TEST_CASE("tree: errors name file:line and what is wrong") {
  CHECK(Error(Tree("SwitchName=s0 Nodes=n[0-3]\nSwitchName=s1 Nodes=n[4-9]\n")) ==
        "topology.conf:2: switch s1 names unknown node n8 (not in tessera.conf)");
  CHECK(Error(Tree("SwitchName=s0 Nodes=n[0-3]\nSwitchName=s1 Nodes=n[3-4]\n")) ==
        "topology.conf:2: node n3 is in switch s1 and already in switch s0 (topology.conf:1)");
  CHECK(Error(Tree("SwitchName=s0 Nodes=n[0-3]\nSwitchName=s0 Nodes=n[4-7]\n")) ==
        "topology.conf:2: switch s0 is defined twice (first at topology.conf:1)");
  CHECK(Error(Tree("SwitchName=s0 Nodes=n[0-3]\nSwitchName=top Switches=s[0-1]\n")) ==
        "topology.conf:2: switch top names unknown switch s1");
  CHECK(Error(Tree("SwitchName=s0 Nodes=n0 Switches=s1\nSwitchName=s1 Nodes=n1\n")) ==
        "topology.conf:1: switch s0 has both Nodes= and Switches= (a leaf has nodes, a higher "
        "switch has switches)");
  CHECK(Error(Tree("SwitchName=s0 Nodes=n[0-3]\nBlockName=b0 Nodes=n[4-7]\n")) ==
        "topology.conf:2: BlockName= lines are topology/block's form, but "
        "TopologyPlugin=topology/tree");
  CHECK_THAT(Error(Tree("SwitchName=s0 Nodes=n[0-3\n")),
             Catch::StartsWith("topology.conf:1: Nodes=: ") && Catch::Contains("n[0-3"));
  CHECK_THAT(Error(Tree("SwitchName=s0 Nodes=n0 LinkSpeed=fast\n")),
             Catch::StartsWith("topology.conf:1: invalid value \"fast\" for LinkSpeed"));
  CHECK(Error(Tree("SwitchName= Nodes=n0\n")) == "topology.conf:1: SwitchName is empty");
  CHECK(Error(Tree("# nothing\n")) == "topology.conf: no SwitchName= lines (topology/tree)");
}

TEST_CASE("tree: a cycle is refused, naming the loop") {
  CHECK(Error(Tree("SwitchName=leaf Nodes=n[0-7]\n"
                   "SwitchName=a Switches=b,leaf\n"
                   "SwitchName=b Switches=c\n"
                   "SwitchName=c Switches=a\n")) ==
        "topology.conf:2: the switch tree has a cycle: a -> b -> c -> a");
  CHECK(Error(Tree("SwitchName=leaf Nodes=n[0-7]\nSwitchName=a Switches=a,leaf\n")) ==
        "topology.conf:2: the switch tree has a cycle: a -> a");
}

TEST_CASE("tree: a switch under two parents is kept under the first, with a warning") {
  auto t = Tree(
      "SwitchName=l0 Nodes=n[0-3]\nSwitchName=l1 Nodes=n[4-7]\n"
      "SwitchName=spine0 Switches=l[0-1]\nSwitchName=spine1 Switches=l[0-1]\n");
  REQUIRE(t.ok());
  REQUIRE(t->warnings.size() == 2);
  CHECK(t->warnings[0] ==
        "topology.conf:4: switch spine1: switch l0 is also a child of spine0; Tessera's tree "
        "keeps its first parent, spine0");
}

TEST_CASE("unknown keys and lines warn with file:line and are never dropped silently") {
  auto t = Tree("SwitchName=s0 Nodes=n[0-7] Bandwidth=7\nTopologyParam=RouteTree\n");
  REQUIRE(t.ok());
  REQUIRE(t->warnings.size() == 2);
  CHECK(t->warnings[0] == "topology.conf:1: unknown switch key Bandwidth; ignored");
  CHECK(t->warnings[1] == "topology.conf:2: unknown topology.conf key TopologyParam; line ignored");
  auto b = Block("BlockName=b0 Nodes=n[0-7] Speed=1\nBlockSizes=8 Color=red\n");
  REQUIRE(b.ok());
  REQUIRE(b->warnings.size() == 2);
  CHECK(b->warnings[0] == "topology.conf:1: unknown block key Speed; ignored");
  CHECK(b->warnings[1] == "topology.conf:2: unknown key Color on the BlockSizes line; ignored");
}

TEST_CASE("block: blocks in file order, explicit BlockSizes") {
  auto b = Block("BlockName=b0 Nodes=n[0-3]\nBlockName=b1 Nodes=n[7,6,5,4]\nBlockSizes=4,8\n");
  INFO(b.status().ToString());
  REQUIRE(b.ok());
  REQUIRE(b->blocks.size() == 2);
  CHECK(b->blocks[1].name == "b1");
  CHECK(b->blocks[1].nodes == std::vector<std::string>{"n7", "n6", "n5", "n4"});
  CHECK(b->blocks[1].where == "topology.conf:2");
  CHECK(b->block_sizes == std::vector<uint32_t>{4, 8});
  CHECK(b->warnings.empty());
}

TEST_CASE("block: Slurm's default BlockSizes is the first block's size times 1,2,4,8,16, "
          "cut at the first that covers all blocks") {
  auto two = Block("BlockName=b0 Nodes=n[0-3]\nBlockName=b1 Nodes=n[4-7]\n");
  REQUIRE(two.ok());
  CHECK(two->block_sizes == std::vector<uint32_t>{4, 8});
  auto three = Block("BlockName=b Nodes=n[0-1]\nBlockName=c Nodes=n[2-3]\n"
                     "BlockName=d Nodes=n[4-5]\n");
  REQUIRE(three.ok());
  CHECK(three->block_sizes == std::vector<uint32_t>{2, 4, 8});  // 4 blocks' worth covers 3
  auto many = Block("BlockName=a Nodes=n0\nBlockName=b Nodes=n1\nBlockName=c Nodes=n2\n"
                    "BlockName=d Nodes=n3\nBlockName=e Nodes=n4\nBlockName=f Nodes=n5\n"
                    "BlockName=g Nodes=n6\nBlockName=h Nodes=n7\n",
                    "n[0-7]");
  REQUIRE(many.ok());
  CHECK(many->block_sizes == std::vector<uint32_t>{1, 2, 4, 8});
  auto one = Block("BlockName=a Nodes=n[0-7]\n");
  REQUIRE(one.ok());
  CHECK(one->block_sizes == std::vector<uint32_t>{8});
}

TEST_CASE("block: explicit sizes beyond what the blocks aggregate warn and are dropped") {
  auto b = Block("BlockName=b0 Nodes=n[0-3]\nBlockName=b1 Nodes=n[4-7]\nBlockSizes=4,8,16,32\n");
  REQUIRE(b.ok());
  CHECK(b->block_sizes == std::vector<uint32_t>{4, 8});
  REQUIRE(b->warnings.size() == 1);
  CHECK(b->warnings[0] ==
        "topology.conf:3: BlockSizes 16,32 exceed what the 2 blocks can aggregate; ignored (as "
        "Slurm)");
}

TEST_CASE("block: invalid BlockSizes and blocks below the base size") {
  std::string blocks = "BlockName=b0 Nodes=n[0-3]\nBlockName=b1 Nodes=n[4-7]\n";
  CHECK(Error(Block(blocks + "BlockSizes=4,12\n")) ==
        "topology.conf:3: invalid value \"4,12\" for BlockSizes: 12 is not the base block size 4 "
        "times a power of two (at most 2^15)");
  CHECK(Error(Block(blocks + "BlockSizes=4,6\n")) ==
        "topology.conf:3: invalid value \"4,6\" for BlockSizes: 6 is not the base block size 4 "
        "times a power of two (at most 2^15)");
  CHECK(Error(Block(blocks + "BlockSizes=8,4\n")) ==
        "topology.conf:3: invalid value \"8,4\" for BlockSizes: 4 is not larger than 8");
  CHECK(Error(Block(blocks + "BlockSizes=0\n")) ==
        "topology.conf:3: invalid value \"0\" for BlockSizes: \"0\" is not a positive node count");
  CHECK(Error(Block(blocks + "BlockSizes=4,\n")) ==
        "topology.conf:3: invalid value \"4,\" for BlockSizes: \"\" is not a positive node count");
  CHECK(Error(Block(blocks + "BlockSizes=4\nBlockSizes=4\n")) ==
        "topology.conf:4: BlockSizes is given twice (first at topology.conf:3)");
  // Slurm: "Each block must have at least the planning base block size count of nodes".
  CHECK(Error(Block(blocks + "BlockSizes=5\n")) ==
        "topology.conf:1: block b0 has 4 nodes, fewer than the base block size 5 (BlockSizes= at "
        "topology.conf:3)");
  // With Slurm's default (the first block's size) a smaller block is a warning.
  auto d = Block("BlockName=b0 Nodes=n[0-5]\nBlockName=b1 Nodes=n[6-7]\n");
  REQUIRE(d.ok());
  REQUIRE(d->warnings.size() == 1);
  CHECK(d->warnings[0] ==
        "topology.conf:2: block b1 has 2 nodes, fewer than the base block size 6 (Slurm's "
        "default, the first block's node count; set BlockSizes=)");
}

TEST_CASE("block: errors name file:line") {
  CHECK(Error(Block("BlockName=b0 Nodes=n[0-3]\nBlockName=b1 Nodes=n[3-6]\n")) ==
        "topology.conf:2: node n3 is in block b1 and already in block b0 (topology.conf:1)");
  CHECK(Error(Block("BlockName=b0 Nodes=n[0-3],n0\n")) ==
        "topology.conf:1: node n0 is in block b0 and already in block b0 (topology.conf:1)");
  CHECK(Error(Block("BlockName=b0 Nodes=n[0-3]\nBlockName=b0 Nodes=n[4-7]\n")) ==
        "topology.conf:2: block b0 is defined twice (first at topology.conf:1)");
  CHECK(Error(Block("BlockName=b0 Nodes=gpu1\n")) ==
        "topology.conf:1: block b0 names unknown node gpu1 (not in tessera.conf)");
  CHECK(Error(Block("SwitchName=s0 Nodes=n[0-3]\n")) ==
        "topology.conf:1: SwitchName= lines are topology/tree's form, but "
        "TopologyPlugin=topology/block");
  CHECK(Error(Block("RingName=r0 Nodes=n[0-3]\n")) ==
        "topology.conf:1: RingName= lines are topology/ring's form, which Tessera does not have, "
        "but TopologyPlugin=topology/block");
  CHECK(Error(Block("BlockSizes=4\n")) == "topology.conf: no BlockName= lines (topology/block)");
  CHECK(Error(Block("BlockName=b0\n")) ==
        "topology.conf: no block has nodes and BlockSizes is not set");
  auto w = Block("BlockName=b0 Nodes=n[0-3]\n");
  REQUIRE(w.ok());
  REQUIRE(w->warnings.size() == 1);
  CHECK(w->warnings[0] ==
        "topology.conf: 4 node(s) of tessera.conf have no place in the topology (no block): "
        "n[4-7]");
}

TEST_CASE("flat reads nothing, Load reads the file and names a missing one") {
  auto flat = ParseTopologyConfig("garbage", "x", TopologyKind::kFlat, {});
  REQUIRE(flat.ok());
  CHECK(flat->kind == TopologyKind::kFlat);
  CHECK(flat->switches.empty());
  auto flat_load = LoadTopologyConfig("/nonexistent/topology.conf", TopologyKind::kFlat, {});
  CHECK(flat_load.ok());

  testing::TempDir dir;
  auto missing = LoadTopologyConfig(dir.path() + "/topology.conf", TopologyKind::kBlock, {"n0"});
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(),
             Catch::Contains("TopologyPlugin=topology/block") &&
                 Catch::Contains(dir.path() + "/topology.conf"));

  std::string path = dir.Write("topology.conf", "BlockName=b0 Nodes=n0\nBlockName=b1 Nodes=n9\n");
  auto bad = LoadTopologyConfig(path, TopologyKind::kBlock, {"n0", "n1"});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == path + ":2: block b1 names unknown node n9 (not in tessera.conf)");
  dir.Write("topology.conf", "BlockName=b0 Nodes=n0\nBlockName=b1 Nodes=n1\n");
  auto good = LoadTopologyConfig(path, TopologyKind::kBlock, {"n0", "n1"});
  REQUIRE(good.ok());
  CHECK(good->path == path);
  CHECK(good->blocks[1].where == path + ":2");
}

}  // namespace tessera
