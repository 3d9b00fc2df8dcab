#include <catch2/catch.hpp>

#include "ctld/sched/topology.h"

using namespace tessera;
using namespace tessera::sched;

namespace {
TopologySwitch Sw(std::string name, std::vector<std::string> nodes,
                  std::vector<std::string> children = {}) {
  TopologySwitch s;
  s.name = std::move(name);
  s.nodes = std::move(nodes);
  s.switches = std::move(children);
  return s;
}
TopologyBlock Bl(std::string name, std::vector<std::string> nodes) {
  TopologyBlock b;
  b.name = std::move(name);
  b.nodes = std::move(nodes);
  return b;
}
}  // namespace

TEST_CASE("BuildTopologySnap: flat gives kind flat and no places") {
  TopologyConfig cfg;
  auto t = BuildTopologySnap(cfg, {"n0", "n1"});
  CHECK(t.kind == TopologyKind::kFlat);
  CHECK(t.switches.empty());
  CHECK(t.blocks.empty());
  CHECK(t.node_leaf == std::vector<int32_t>{-1, -1});
}

TEST_CASE("BuildTopologySnap: a 3-tier tree maps nodes to leaves in snapshot order") {
  TopologyConfig cfg;
  cfg.kind = TopologyKind::kTree;
  cfg.switches = {Sw("core", {}, {"spine0", "spine1"}),
                  Sw("spine0", {}, {"leaf0", "leaf1"}),
                  Sw("spine1", {}, {"leaf2"}),
                  Sw("leaf0", {"n0", "n1"}),
                  Sw("leaf1", {"n2", "n3", "ghost"}),  // ghost: not in the snapshot
                  Sw("leaf2", {"n5"})};
  // Snapshot order differs from the file; n4 has no place.
  auto t = BuildTopologySnap(cfg, {"n3", "n4", "n0", "n5", "n1", "n2"});
  REQUIRE(t.kind == TopologyKind::kTree);
  REQUIRE(t.switches.size() == 6);
  CHECK(t.switches[0].name == "core");
  CHECK(t.switches[0].parent == -1);
  CHECK(t.switches[0].level == 2);
  CHECK(t.switches[0].children == std::vector<uint32_t>{1, 2});
  CHECK(t.switches[1].level == 1);
  CHECK(t.switches[1].parent == 0);
  CHECK(t.switches[2].level == 1);
  CHECK(t.switches[3].level == 0);
  CHECK(t.switches[3].parent == 1);
  CHECK(t.switches[5].parent == 2);
  CHECK(t.switches[3].nodes == std::vector<uint32_t>{2, 4});
  CHECK(t.switches[4].nodes == std::vector<uint32_t>{5, 0});  // ghost left out
  CHECK(t.switches[5].nodes == std::vector<uint32_t>{3});
  CHECK(t.node_leaf == std::vector<int32_t>{4, -1, 3, 5, 3, 4});
}

TEST_CASE("BuildTopologySnap: a tree with several roots keeps each root's parent -1") {
  TopologyConfig cfg;
  cfg.kind = TopologyKind::kTree;
  cfg.switches = {Sw("a", {"n0"}), Sw("b", {"n1"})};
  auto t = BuildTopologySnap(cfg, {"n0", "n1"});
  REQUIRE(t.switches.size() == 2);
  CHECK(t.switches[0].parent == -1);
  CHECK(t.switches[1].parent == -1);
  CHECK(t.switches[0].level == 0);
  CHECK(t.node_leaf == std::vector<int32_t>{0, 1});
}

TEST_CASE("BuildTopologySnap: a cycle the parser should have refused does not hang") {
  TopologyConfig cfg;
  cfg.kind = TopologyKind::kTree;
  cfg.switches = {Sw("a", {}, {"b"}), Sw("b", {"n0"}, {"a"})};
  auto t = BuildTopologySnap(cfg, {"n0"});
  REQUIRE(t.switches.size() == 2);
  CHECK(t.node_leaf == std::vector<int32_t>{1});
}

TEST_CASE("BuildTopologySnap: blocks keep file order and BlockSizes") {
  TopologyConfig cfg;
  cfg.kind = TopologyKind::kBlock;
  cfg.blocks = {Bl("b0", {"n0", "n1"}), Bl("b1", {"n2", "n3"}), Bl("b2", {"n4", "n9"})};
  cfg.block_sizes = {4, 2, 4};
  auto t = BuildTopologySnap(cfg, {"n4", "n3", "n2", "n1", "n0"});
  REQUIRE(t.kind == TopologyKind::kBlock);
  REQUIRE(t.blocks.size() == 3);
  CHECK(t.blocks[0].name == "b0");
  CHECK(t.blocks[0].nodes == std::vector<uint32_t>{4, 3});
  CHECK(t.blocks[1].nodes == std::vector<uint32_t>{2, 1});
  CHECK(t.blocks[2].nodes == std::vector<uint32_t>{0});  // n9 not in the snapshot
  CHECK(t.block_sizes == std::vector<uint32_t>{2, 4});
  CHECK(t.node_leaf == std::vector<int32_t>{2, 1, 1, 0, 0});
  CHECK(t.switches.empty());
}

TEST_CASE("BuildTopologySnap: blocks without BlockSizes get Slurm's power-of-two default") {
  TopologyConfig cfg;
  cfg.kind = TopologyKind::kBlock;
  for (int b = 0; b < 5; ++b) {
    cfg.blocks.push_back(Bl("b" + std::to_string(b), {"x" + std::to_string(b), "y" +
                                                      std::to_string(b)}));
  }
  auto t = BuildTopologySnap(cfg, {"x0"});
  CHECK(t.block_sizes == std::vector<uint32_t>{2, 4, 8});
}

TEST_CASE("BuildTopologySnap: a node in two places keeps its first one") {
  TopologyConfig cfg;
  cfg.kind = TopologyKind::kBlock;
  cfg.blocks = {Bl("b0", {"n0"}), Bl("b1", {"n0", "n1"})};
  auto t = BuildTopologySnap(cfg, {"n0", "n1"});
  CHECK(t.blocks[0].nodes == std::vector<uint32_t>{0});
  CHECK(t.blocks[1].nodes == std::vector<uint32_t>{1});
  CHECK(t.node_leaf == std::vector<int32_t>{0, 1});
}

// --- TopoState: candidate sets and their free sums (topology_state.h) ---
#include "ctld/sched/cluster_state.h"

namespace {
ClusterSnapshot BlockCluster(uint32_t blocks, uint32_t per_block, std::vector<uint32_t> sizes) {
  ClusterSnapshot snap;
  snap.partitions.push_back({});
  snap.partitions[0].name = "p";
  TopologyConfig cfg;
  cfg.kind = TopologyKind::kBlock;
  cfg.block_sizes = std::move(sizes);
  std::vector<std::string> names;
  for (uint32_t b = 0; b < blocks; ++b) {
    TopologyBlock blk;
    blk.name = "b" + std::to_string(b);
    for (uint32_t i = 0; i < per_block; ++i) {
      NodeSnap n;
      n.name = "n" + std::to_string(b * per_block + i);
      n.cpus_total = n.cpus_free = 4;
      n.mem_total = n.mem_free = 4000;
      n.partitions = {"p"};
      blk.nodes.push_back(n.name);
      names.push_back(n.name);
      snap.nodes.push_back(n);
    }
    cfg.blocks.push_back(blk);
  }
  snap.topology = std::make_shared<const TopologySnap>(BuildTopologySnap(cfg, names));
  return snap;
}
}  // namespace

TEST_CASE("TopoState: blocks form tiers of aligned aggregates per BlockSizes") {
  ClusterSnapshot snap = BlockCluster(5, 2, {2, 4, 8});
  ClusterState st(snap);
  REQUIRE(st.topo() != nullptr);
  const TopoState& t = *st.topo();
  REQUIRE(t.TierCount() == 3);
  CHECK(t.Tier(0).size() == 5);
  CHECK(t.Tier(1).size() == 2);  // b0+b1, b2+b3 (b4 has no partner: no partial aggregate)
  CHECK(t.Tier(2).size() == 1);  // b0..b3
  CHECK(t.Group(t.Tier(1)[1]).leaves == std::vector<int32_t>{2, 3});
  CHECK(t.GroupsOfLeaf(4).size() == 1);
  CHECK(t.GroupsOfLeaf(0).size() == 3);
  const GroupFree& f = t.Free(0, t.Tier(2)[0]);
  CHECK(f.cpus == 32);
  CHECK(f.nodes == 8);
  CHECK(f.open == 8);
}

TEST_CASE("TopoState: free sums follow takes and returns of every group holding the node") {
  ClusterSnapshot snap = BlockCluster(4, 2, {2, 4});
  ClusterState st(snap);
  const TopoState& t = *st.topo();
  NodeRt& n = st.nodes()[3];  // block b1, aggregate b0+b1
  uint32_t agg = t.GroupsOfLeaf(1)[1];
  st.TakeNow(n, {4, 4000, 0});
  CHECK(t.Free(0, 1).cpus == 4);
  CHECK(t.Free(0, 1).open == 1);
  CHECK(t.Free(0, 1).idle == 1);
  CHECK(t.Free(0, agg).cpus == 12);
  CHECK(t.Free(0, 0).cpus == 8);  // b0 untouched
  st.ReturnNow(n, {2, 2000, 0});
  CHECK(t.Free(0, 1).open == 2);
  CHECK(t.Free(0, 1).idle == 1);
  CHECK(t.Free(0, agg).cpus == 14);
}

TEST_CASE("TopoState: a tree's groups are its switches, tiers its levels") {
  ClusterSnapshot snap;
  snap.partitions.push_back({});
  snap.partitions[0].name = "p";
  std::vector<std::string> names;
  for (int i = 0; i < 4; ++i) {
    NodeSnap n;
    n.name = "n" + std::to_string(i);
    n.cpus_total = n.cpus_free = 2;
    n.partitions = {"p"};
    names.push_back(n.name);
    snap.nodes.push_back(n);
  }
  TopologyConfig cfg;
  cfg.kind = TopologyKind::kTree;
  cfg.switches = {Sw("l0", {"n0", "n1"}), Sw("l1", {"n2", "n3"}), Sw("top", {}, {"l0", "l1"})};
  snap.topology = std::make_shared<const TopologySnap>(BuildTopologySnap(cfg, names));
  ClusterState st(snap);
  const TopoState& t = *st.topo();
  REQUIRE(t.TierCount() == 2);
  CHECK(t.Tier(0) == std::vector<uint32_t>{0, 1});
  CHECK(t.Tier(1) == std::vector<uint32_t>{2});
  CHECK(t.Group(2).leaves == std::vector<int32_t>{0, 1});
  CHECK(t.Free(0, 2).cpus == 8);
  CHECK(t.MaxNodeCpus(0) == 2);
}
