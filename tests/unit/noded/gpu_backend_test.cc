#include <catch2/catch.hpp>

#include <regex>
#include <set>

#include "common/cluster_config.h"
#include "noded/gpu_backend.h"
#include "noded/node_resources.h"

using namespace tessera;
using namespace tessera::noded;

namespace {

ClusterConfig Config() {
  auto conf = ParseConfigText(
      "ClusterName=simc\n"
      "NodeName=n[1-2] CPUs=8 RealMemory=16000 Gres=gpu:a100:2,gpu:h100:1\n"
      "PartitionName=p Nodes=n[1-2] Default=YES\n",
      "tessera.conf");
  auto gres = ParseConfigText(
      "NodeName=n[1-2] Name=gpu Type=a100 Count=2 MemoryMiB=40960 Simulated=yes\n"
      "NodeName=n1 Name=gpu Type=h100 Count=1 MemoryMiB=81920 Simulated=yes\n",
      "gres.conf");
  REQUIRE(conf.ok());
  REQUIRE(gres.ok());
  auto cfg = BuildClusterConfig(*conf, *gres);
  INFO(cfg.status().ToString());
  REQUIRE(cfg.ok());
  return *cfg;
}

std::vector<GpuInfo> Discover(const ClusterConfig& cfg, const std::string& node) {
  auto it = cfg.gpus.find(node);
  SimulatedGpuBackend b(cfg.cluster_name, node, it == cfg.gpus.end() ? std::vector<GpuDecl>{}
                                                                     : it->second);
  auto devs = b.Discover();
  REQUIRE(devs.ok());
  return *devs;
}

}  // namespace

TEST_CASE("simulated backend creates one device per declared count, indexed in order") {
  auto cfg = Config();
  auto n1 = Discover(cfg, "n1");
  REQUIRE(n1.size() == 3);
  for (uint32_t i = 0; i < 3; ++i) CHECK(n1[i].index == i);
  CHECK(n1[0].model == "a100");
  CHECK(n1[1].model == "a100");
  CHECK(n1[2].model == "h100");
  CHECK(n1[0].memory_mib == 40960);
  CHECK(n1[2].memory_mib == 81920);
  for (const auto& g : n1) {
    CHECK(g.simulated);
    CHECK(g.healthy);
  }
  CHECK(Discover(cfg, "n2").size() == 2);
  CHECK(Discover(cfg, "n3").empty());
}

TEST_CASE("simulated UUIDs are deterministic, unique and NVIDIA-shaped") {
  auto cfg = Config();
  auto a = Discover(cfg, "n1");
  auto b = Discover(cfg, "n1");
  auto other = Discover(cfg, "n2");
  std::set<std::string> all;
  std::regex shape("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].uuid == b[i].uuid);
    CHECK(std::regex_match(a[i].uuid, shape));
    all.insert(a[i].uuid);
  }
  for (const auto& g : other) all.insert(g.uuid);
  CHECK(all.size() == a.size() + other.size());
  CHECK(SimulatedGpuUuid("simc", "n1", 0) == a[0].uuid);
  CHECK(SimulatedGpuUuid("other", "n1", 0) != a[0].uuid);
}

TEST_CASE("non-simulated declarations are left to a real backend") {
  std::vector<GpuDecl> decls = {{"a100", 2, 40960, false, "x"}, {"t4", 1, 16000, true, "y"}};
  SimulatedGpuBackend b("c", "n", decls);
  auto devs = b.Discover();
  REQUIRE(devs.ok());
  REQUIRE(devs->size() == 1);
  CHECK((*devs)[0].model == "t4");
  CHECK((*devs)[0].index == 0);
}

TEST_CASE("meminfo and /proc/stat parsing") {
  auto mem = ParseMemTotalMib("MemTotal:       16303412 kB\nMemFree:  100 kB\n");
  REQUIRE(mem.ok());
  CHECK(*mem == 15921);
  CHECK(!ParseMemTotalMib("MemFree: 1 kB\n").ok());
  CHECK(!ParseMemTotalMib("MemTotal: lots\n").ok());
  auto bt = ParseBootTime("cpu 1 2 3\nbtime 1700000000\nprocesses 5\n");
  REQUIRE(bt.ok());
  CHECK(*bt == 1700000000);
  CHECK(!ParseBootTime("cpu 1\n").ok());
  CHECK(DiscoverCpus() >= 1);
  auto real = DiscoverMemoryMib();
  REQUIRE(real.ok());
  CHECK(*real > 0);
}
