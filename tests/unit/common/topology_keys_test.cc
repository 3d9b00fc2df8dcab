// tessera.conf's topology keys (issue 15): TopologyPlugin=, TopologyFile=, PartitionName=...
// TopologyMode=required|preferred.
#include <catch2/catch.hpp>

#include "common/cluster_config.h"

namespace tessera {
namespace {

Result<ClusterConfig> Build(const std::string& text) {
  auto lines = ParseConfigText(text, "/etc/tessera/tessera.conf");
  if (!lines.ok()) return lines.status();
  return BuildClusterConfig(*lines, {});
}

}  // namespace

TEST_CASE("TopologyPlugin and TopologyFile: default file beside tessera.conf") {
  auto c = Build("TopologyPlugin=topology/block\nNodeName=n[1-2]\nPartitionName=p Nodes=n[1-2]\n");
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  CHECK(c->topology_kind == TopologyKind::kBlock);
  CHECK(c->topology_file == "/etc/tessera/topology.conf");
  CHECK(c->topology == nullptr);  // only ctld reads the file
  CHECK(c->warnings.empty());     // TopologyPlugin is no longer an ignored Slurm key
  auto rel = Build("TopologyPlugin=topology/tree\nTopologyFile=net/topo.conf\nNodeName=n1\n");
  REQUIRE(rel.ok());
  CHECK(rel->topology_kind == TopologyKind::kTree);
  CHECK(rel->topology_file == "/etc/tessera/net/topo.conf");
  auto abs = Build("TopologyFile=/srv/topo.conf\nNodeName=n1\n");
  REQUIRE(abs.ok());
  CHECK(abs->topology_kind == TopologyKind::kFlat);
  CHECK(abs->topology_file == "/srv/topo.conf");
  auto dflt = Build("TopologyPlugin=topology/default\nNodeName=n1\n");
  REQUIRE(dflt.ok());
  CHECK(dflt->topology_kind == TopologyKind::kFlat);
}

TEST_CASE("TopologyPlugin: an unknown plugin names file:line and the choices") {
  auto c = Build("NodeName=n1\nTopologyPlugin=topology/torus3d\n");
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(c.status().message(),
             Catch::StartsWith("/etc/tessera/tessera.conf:2: invalid value \"topology/torus3d\" "
                               "for TopologyPlugin") &&
                 Catch::Contains("topology/block"));
  auto e = Build("NodeName=n1\nTopologyFile=\n");
  REQUIRE_FALSE(e.ok());
  CHECK_THAT(e.status().message(), Catch::StartsWith("/etc/tessera/tessera.conf:2: invalid value"));
}

TEST_CASE("TopologyMode on partition lines, DEFAULT lines included") {
  auto c = Build(
      "NodeName=n[1-4]\n"
      "PartitionName=DEFAULT TopologyMode=Required\n"
      "PartitionName=gang Nodes=n[1-2]\n"
      "PartitionName=loose Nodes=n[3-4] TopologyMode=preferred\n");
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  CHECK(c->FindPartition("gang")->topology_required);
  CHECK_FALSE(c->FindPartition("loose")->topology_required);
  auto bad = Build("NodeName=n1\nPartitionName=p Nodes=n1 TopologyMode=strict\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "/etc/tessera/tessera.conf:2: invalid value \"strict\" for TopologyMode: expected "
        "required or preferred");
}

TEST_CASE("TopologyParam is a Slurm key Tessera does not implement: warned") {
  auto c = Build("NodeName=n1\nTopologyParam=SwitchAsNodeRank\n");
  REQUIRE(c.ok());
  REQUIRE(c->warnings.size() == 1);
  CHECK_THAT(c->warnings[0], Catch::StartsWith("/etc/tessera/tessera.conf:2: TopologyParam is a "
                                               "Slurm key Tessera does not implement"));
}

}  // namespace tessera
