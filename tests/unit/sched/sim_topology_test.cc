// tessera-sim with a topology (issue 15): generated topologies, spread metrics, topology-aware
// against topology-blind replay.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "ctld/sched/topology.h"
#include "sim/engine.h"
#include "sim/topology.h"

using namespace tessera;
namespace fs = std::filesystem;

namespace {
// 8 one-CPU nodes; leaf0 = even nodes, leaf1 = odd nodes (config order alternates leaves).
sched::ClusterSnapshot Interleaved() {
  sched::ClusterSnapshot c;
  for (int i = 0; i < 8; ++i) {
    sched::NodeSnap n;
    n.name = "n" + std::to_string(i);
    n.cpus_total = n.cpus_free = 1;
    n.mem_total = n.mem_free = 1000;
    n.partitions = {"p"};
    c.nodes.push_back(n);
  }
  c.partitions = {{"p", true, 0, -1, -1, 1}};
  return c;
}
std::string WriteTemp(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p.string();
}
}  // namespace

TEST_CASE("sim: generated fat tree and blocks") {
  std::vector<std::string> names;
  for (int i = 0; i < 10; ++i) names.push_back("n" + std::to_string(i));
  auto tree = sim::GenerateTopology("fat-tree:4,2", names);
  REQUIRE(tree.ok());
  auto t = sched::BuildTopologySnap(*tree, names);
  // 3 leaves (4,4,2 nodes), 2 spines, 1 core
  REQUIRE(t.switches.size() == 6);
  int leaves = 0, spines = 0, cores = 0;
  for (const auto& s : t.switches) (s.level == 0 ? leaves : s.level == 1 ? spines : cores)++;
  CHECK(leaves == 3);
  CHECK(spines == 2);
  CHECK(cores == 1);
  CHECK(t.node_leaf[5] == t.node_leaf[7]);
  CHECK(t.node_leaf[3] != t.node_leaf[4]);
  auto blk = sim::GenerateTopology("block:4", names);
  REQUIRE(blk.ok());
  CHECK(blk->blocks.size() == 3);
  CHECK(blk->block_sizes == std::vector<uint32_t>{4, 8, 16});
  for (const char* bad : {"fat-tree:4", "fat-tree:0,2", "block:x", "torus:4"}) {
    auto r = sim::GenerateTopology(bad, names);
    INFO(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find(bad) != std::string::npos);
  }
}

TEST_CASE("sim: topology-aware placement keeps gangs in one leaf; blind spreads them") {
  sched::ClusterSnapshot c = Interleaved();
  std::vector<std::string> names;
  for (const auto& n : c.nodes) names.push_back(n.name);
  std::string conf = WriteTemp("tessera_sim_topo.conf",
                               "SwitchName=leaf0 Nodes=n[0,2,4,6]\n"
                               "SwitchName=leaf1 Nodes=n[1,3,5,7]\n"
                               "SwitchName=top Switches=leaf[0-1]\n");
  std::vector<std::string> warnings;
  REQUIRE(sim::ApplyTopologyArgs({{"topology", conf}, {"topology-plugin", "topology/tree"}}, &c,
                                 &warnings)
              .ok());
  REQUIRE(c.topology);
  std::vector<sim::TraceJob> trace(2);
  for (int i = 0; i < 2; ++i) {  // two 4-node gangs: each fits one leaf
    trace[i].id = i + 1;
    trace[i].submit = i;
    trace[i].runtime = 100;
    trace[i].cpus = 4;
    trace[i].nodes = 4;
    trace[i].user = "u";
  }
  auto aware = sim::Simulate(c, "p", sched::SchedConfig{}, trace, "topo-aware");
  sched::ClusterSnapshot flat = c;
  flat.topology = nullptr;
  auto blind = sim::Simulate(flat, "p", sched::SchedConfig{}, trace, "topo-blind");
  auto a = sim::ComputeSpread(aware, *c.topology);
  auto b = sim::ComputeSpread(blind, *c.topology);
  CHECK(a.multi_node == 2);
  CHECK(a.over == 0);
  CHECK(a.mean_ratio == Approx(1.0));
  CHECK(b.multi_node == 2);
  CHECK(b.over == 2);
  CHECK(b.worst_used == 2);
  CHECK(b.worst_needed == 1);
  fs::remove(conf);
}

TEST_CASE("sim: a broken topology file is the parser's error with file:line") {
  sched::ClusterSnapshot c = Interleaved();
  std::string conf = WriteTemp("tessera_sim_topo_bad.conf", "SwitchName=leaf0 Nodes=n[0-3],x9\n");
  std::vector<std::string> warnings;
  Status st = sim::ApplyTopologyArgs({{"topology", conf}, {"topology-plugin", "topology/tree"}},
                                     &c, &warnings);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("tessera_sim_topo_bad.conf:1") != std::string::npos);
  CHECK(st.message().find("x9") != std::string::npos);
  CHECK_FALSE(c.topology);
  CHECK_FALSE(sim::ApplyTopologyArgs({{"topology", conf}}, &c, &warnings).ok());
  CHECK_FALSE(sim::ApplyTopologyArgs({{"gen-topology", "block:2"}, {"topology-mode", "maybe"}}, &c,
                                     &warnings)
                  .ok());
  fs::remove(conf);
}
