// Issue 14: PartitionName= GpuFailurePolicy=requeue|fail|ignore (default requeue); a bad value
// names file:line and loads nothing.
#include <catch2/catch.hpp>

#include "common/cluster_config.h"

using namespace tessera;

namespace {

Result<ClusterConfig> Load(const std::string& parts) {
  auto lines = ParseConfigText("ClusterName=t\nNodeName=n[1-2] CPUs=1\n" + parts, "tessera.conf");
  REQUIRE(lines.ok());
  return BuildClusterConfig(*lines, {});
}

}  // namespace

TEST_CASE("GpuFailurePolicy per partition, requeue by default") {
  auto c = Load("PartitionName=a Nodes=n1 GpuFailurePolicy=fail\n"
                "PartitionName=b Nodes=n2 GpuFailurePolicy=IGNORE\n"
                "PartitionName=c Nodes=n[1-2]\n");
  INFO(c.status().message());
  REQUIRE(c.ok());
  CHECK(c->FindPartition("a")->gpu_failure_policy == GpuFailurePolicy::kFail);
  CHECK(c->FindPartition("b")->gpu_failure_policy == GpuFailurePolicy::kIgnore);
  CHECK(c->FindPartition("c")->gpu_failure_policy == GpuFailurePolicy::kRequeue);
  CHECK(std::string(GpuFailurePolicyName(GpuFailurePolicy::kIgnore)) == "ignore");
  for (const auto& w : c->warnings) CHECK(w.find("GpuFailurePolicy") == std::string::npos);
}

TEST_CASE("a bad GpuFailurePolicy names file:line") {
  auto c = Load("PartitionName=a Nodes=n1\nPartitionName=b Nodes=n2 GpuFailurePolicy=retry\n");
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("tessera.conf:4") != std::string::npos);
  CHECK(c.status().message().find("invalid value \"retry\" for GpuFailurePolicy") != std::string::npos);
  CHECK(c.status().message().find("expected requeue, fail or ignore") != std::string::npos);
}
