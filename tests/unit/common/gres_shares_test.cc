// Issue 14: Slurm's separate gres.conf lines `Name=mps Count=N` and `Name=shard Count=N` (with or
// without File=) map onto the per-GPU model (GpuDecl::MpsCount / ShardCount) with Slurm's
// semantics; bad lines name gres.conf:line and load nothing.
#include <catch2/catch.hpp>

#include "common/cluster_config.h"

using namespace tessera;

namespace {

const char* kConf = "NodeName=n[1-3] CPUs=4\nPartitionName=p Nodes=n[1-3]\n";

Result<ClusterConfig> Build(const std::string& gres) {
  auto lines = ParseConfigText(kConf, "tessera.conf");
  REQUIRE(lines.ok());
  auto g = ParseConfigText(gres, "gres.conf");
  REQUIRE(g.ok());
  return BuildClusterConfig(*lines, *g);
}

// Per-GPU counts of `node` over all its declarations (index order).
std::vector<uint32_t> Mps(const ClusterConfig& c, const std::string& node) {
  std::vector<uint32_t> out;
  for (const auto& d : c.gpus.at(node))
    for (uint32_t i = 0; i < d.count; ++i) out.push_back(d.MpsCount(i));
  return out;
}
std::vector<uint32_t> Shards(const ClusterConfig& c, const std::string& node) {
  std::vector<uint32_t> out;
  for (const auto& d : c.gpus.at(node))
    for (uint32_t i = 0; i < d.count; ++i) out.push_back(d.ShardCount(i));
  return out;
}

std::string Error(const std::string& gres) {
  auto c = Build(gres);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == Code::kInvalidArgument);
  return c.status().message();
}

using V = std::vector<uint32_t>;

}  // namespace

TEST_CASE("Name=mps Count= without File= is spread evenly over the node's GPUs") {
  auto c = Build("NodeName=n[1-2] Name=gpu Type=a100 Count=2 Simulated=yes\n"
                 "NodeName=n[1-2] Name=gpu Type=t4 Count=1 Simulated=yes\n"
                 "NodeName=n1 Name=mps Count=600\n"
                 "NodeName=n2 Name=MPS Count=10\n");
  INFO(c.status().message());
  REQUIRE(c.ok());
  CHECK(Mps(*c, "n1") == V{200, 200, 200});
  CHECK(Mps(*c, "n2") == V{3, 3, 4});  // Slurm: the remainder goes to the last GPUs
  CHECK(c->gpus.at("n1")[0].mps);      // a GPU with a count offers MPS
  CHECK(c->gpus.at("n1")[1].mps);
  CHECK(Shards(*c, "n1") == V{0, 0, 0});
  CHECK(c->warnings.empty());
}

TEST_CASE("Name=mps lines before the GPU lines, and per device with File=") {
  auto c = Build("NodeName=n1 Name=mps Count=1300 File=/dev/nvidia0\n"
                 "NodeName=n1 Name=mps Count=0 File=/dev/nvidia1\n"
                 "NodeName=n1 Name=mps Count=400 File=/dev/nvidia[2-3]\n"
                 "NodeName=n1 Name=gpu Count=4 Simulated=yes\n"
                 "NodeName=n2 Name=gpu Count=2 Simulated=yes\n");
  INFO(c.status().message());
  REQUIRE(c.ok());
  CHECK(Mps(*c, "n1") == V{1300, 0, 200, 200});
  CHECK(Mps(*c, "n2") == V{0, 0});  // no line for n2: no MPS
  CHECK_FALSE(c->gpus.at("n2")[0].mps);
}

TEST_CASE("Name=shard Count= spreads shards, File= names one GPU") {
  auto c = Build("NodeName=n[1-2] Name=gpu Count=2 Simulated=yes\n"
                 "NodeName=n1 Name=shard Count=8\n"
                 "NodeName=n2 Name=shard Count=6 File=/dev/nvidia1\n"
                 "NodeName=n2 Name=mps Count=100 File=/dev/nvidia0\n");
  INFO(c.status().message());
  REQUIRE(c.ok());
  CHECK(Shards(*c, "n1") == V{4, 4});
  CHECK(Shards(*c, "n2") == V{0, 6});
  CHECK(Mps(*c, "n2") == V{100, 0});
}

TEST_CASE("Mps=yes and Replicas= on GPU lines keep their meaning") {
  auto c = Build("NodeName=n1 Name=gpu Count=2 Simulated=yes Mps=yes\n"
                 "NodeName=n2 Name=gpu Count=2 Simulated=yes Replicas=3\n");
  REQUIRE(c.ok());
  CHECK(Mps(*c, "n1") == V{100, 100});
  CHECK(Shards(*c, "n2") == V{3, 3});
  CHECK(c->gpus.at("n1")[0].mps_counts.empty());
}

TEST_CASE("bad Name=mps / Name=shard lines name gres.conf:line") {
  const std::string gpus = "NodeName=n[1-2] Name=gpu Count=2 Simulated=yes\n";
  CHECK(Error(gpus + "NodeName=n1 Name=mps Count=lots\n") ==
        "gres.conf:2: invalid value \"lots\" for Count: expected a count of 0..100000");
  CHECK(Error(gpus + "NodeName=n1 Name=mps Count=-5\n").find("gres.conf:2: invalid value") == 0);
  CHECK(Error(gpus + "NodeName=n1 Name=mps Count=100001\n").find("gres.conf:2:") == 0);
  CHECK(Error(gpus + "NodeName=n1 Name=mps\n") == "gres.conf:2: Name=mps line needs Count=");
  CHECK(Error(gpus + "Name=shard Count=2\n") == "gres.conf:2: Name=shard line needs NodeName=");
  CHECK(Error(gpus + "NodeName=n1 Name=mps Count=0\n") ==
        "gres.conf:2: Name=mps Count=0 without File= offers nothing (leave the line out)");
  CHECK(Error(gpus + "NodeName=n1 Name=shard Count=130\n") ==
        "gres.conf:2: Name=shard Count=130 gives GPU 0 of node n1 65 shards; at most 64 per GPU");
  CHECK(Error(gpus + "NodeName=n1 Name=mps Count=100 File=/dev/nvidia2\n") ==
        "gres.conf:2: File=/dev/nvidia2: node n1 has 2 GPUs (indices 0..1 from its Name=gpu lines)");
  CHECK(Error(gpus + "NodeName=n1 Name=mps Count=100 File=/dev/sda\n").find(
            "gres.conf:2: File=/dev/sda: expected GPU device files /dev/nvidia<N>") == 0);
  CHECK(Error(gpus + "NodeName=n1 Name=mps Count=100 File=/dev/nvidia0\n"
                     "NodeName=n1 Name=mps Count=100 File=/dev/nvidia0\n") ==
        "gres.conf:3: GPU 0 of node n1 already has a Name=mps count");
  CHECK(Error(gpus + "NodeName=n1 Name=mps Count=100 File=/dev/nvidia0\n"
                     "NodeName=n1 Name=mps Count=100\n") ==
        "gres.conf:3: Name=mps lines for node n1 both with and without File= (gres.conf:2); give "
        "every GPU its File= or use one line without");
  CHECK(Error(gpus + "NodeName=n3 Name=mps Count=100\n") ==
        "gres.conf:2: Name=mps for node n3, which has no Name=gpu line in gres.conf");
  CHECK(Error(gpus + "NodeName=n9 Name=mps Count=100\n") == "gres.conf:2: unknown node n9");
  CHECK(Error("NodeName=n1 Name=gpu Count=2 Simulated=yes Mps=yes\n"
              "NodeName=n1 Name=mps Count=200\n") ==
        "gres.conf:2: Name=mps for node n1, whose Name=gpu line gres.conf:1 already says Mps=yes "
        "(use one or the other)");
  CHECK(Error("NodeName=n1 Name=gpu Count=2 Simulated=yes Replicas=2\n"
              "NodeName=n1 Name=shard Count=4\n")
            .find("already says Replicas=") != std::string::npos);
}
