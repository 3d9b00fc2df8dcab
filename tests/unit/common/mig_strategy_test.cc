// MigStrategy=dynamic|static on NodeName= and PartitionName= lines (issue 14, dynamic MIG).
#include <catch2/catch.hpp>

#include "common/cluster_config.h"

namespace tessera {
namespace {

Result<ClusterConfig> Build(const std::string& text) {
  auto lines = ParseConfigText(text, "tessera.conf");
  if (!lines.ok()) return lines.status();
  return BuildClusterConfig(*lines, {});
}

}  // namespace

TEST_CASE("MigStrategy: node setting wins, else a dynamic partition makes its nodes dynamic") {
  auto c = Build(
      "NodeName=n1 MigStrategy=dynamic\n"
      "NodeName=n2 MigStrategy=Static\n"
      "NodeName=n3\n"
      "NodeName=n4\n"
      "PartitionName=dyn Nodes=n2,n3 MigStrategy=DYNAMIC\n"
      "PartitionName=plain Nodes=n4\n");
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  CHECK(c->MigDynamic("n1"));
  CHECK_FALSE(c->MigDynamic("n2"));  // the node line says static
  CHECK(c->MigDynamic("n3"));        // from partition dyn
  CHECK_FALSE(c->MigDynamic("n4"));  // default static
  CHECK_FALSE(c->MigDynamic("nope"));
  CHECK(c->FindPartition("dyn")->mig_strategy == "dynamic");
  CHECK(c->warnings.empty());
}

TEST_CASE("MigStrategy: a bad value names file:line, the key and the choices") {
  auto n = Build("NodeName=n1 MigStrategy=sometimes\nPartitionName=p Nodes=n1\n");
  REQUIRE_FALSE(n.ok());
  CHECK(n.status().message() ==
        "tessera.conf:1: invalid value \"sometimes\" for MigStrategy: expected dynamic or static");
  auto p = Build("NodeName=n1\nPartitionName=p Nodes=n1 MigStrategy=\n");
  REQUIRE_FALSE(p.ok());
  CHECK_THAT(p.status().message(), Catch::StartsWith("tessera.conf:2: invalid value \"\" for MigStrategy"));
}

}  // namespace tessera
