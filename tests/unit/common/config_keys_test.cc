// Issue 21: the table of configuration keys (common/config_keys.h) is the code's list of known
// keys, and the admin guide's table is generated from it.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "common/cluster_config.h"
#include "common/config_check.h"
#include "common/config_keys.h"
#include "temp_dir.h"

namespace tessera {
namespace {

const char kBase[] = "SlurmctldHost=localhost\nNodeName=n[1-4] CPUs=4 RealMemory=1000\n";

TEST_CASE("config keys: the admin guide's table is the generated one", "[config_keys]") {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/docs/admin-guide.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  const std::string begin = "<!-- config-keys:begin -->\n", end = "<!-- config-keys:end -->";
  size_t b = doc.find(begin), e = doc.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  INFO("regenerate: build/tools/tessera-config-keys --update docs/admin-guide.md");
  CHECK(doc.substr(b + begin.size(), e - b - begin.size()) == ConfigKeysMarkdown());
}

TEST_CASE("config keys: every global key of the table loads with its example, none unknown",
          "[config_keys]") {
  for (const auto& k : ConfigKeys()) {
    if (std::string(k.file) != "tessera.conf" || *k.line) continue;
    std::string name = k.names;
    name = name.substr(0, name.find('|'));
    if (name.rfind("Tls", 0) == 0) continue;  // the three together: below
    INFO(name << "=" << k.example);
    auto lines = ParseConfigText(std::string(kBase) + name + "=" + k.example + "\n", "t.conf");
    REQUIRE(lines.ok());
    auto c = BuildClusterConfig(*lines, {});
    REQUIRE(c.ok());
    bool ignored = std::string(k.readers) == "ignored";
    REQUIRE(c->warnings.size() == (ignored ? 1u : 0u));
    if (ignored) CHECK_THAT(c->warnings[0], Catch::Contains("Slurm key Tessera does not implement"));
  }
  auto tls = ParseConfigText(std::string(kBase) + "TlsCertFile=/a\nTlsKeyFile=/b\nTlsCaFile=/c\n", "t.conf");
  REQUIRE(tls.ok());
  auto c = BuildClusterConfig(*tls, {});
  REQUIRE(c.ok());
  CHECK(c->warnings.empty());
}

TEST_CASE("config keys: node and partition keys of the table load with their examples", "[config_keys]") {
  for (const auto& k : ConfigKeys()) {
    std::string line = k.line;
    if (std::string(k.file) != "tessera.conf" || (line != "NodeName" && line != "PartitionName")) continue;
    std::string name = k.names;
    name = name.substr(0, name.find('|'));
    if (name == line) continue;
    std::string text = line == "NodeName" ? "SlurmctldHost=h\nNodeName=x[1-4] " + name + "=" + k.example + "\n"
                                          : std::string(kBase) + "PartitionName=p Nodes=n1 " + name + "=" + k.example + "\n";
    if (name == "Nodes") text = std::string(kBase) + "PartitionName=p Nodes=" + k.example + "\n";
    INFO(text);
    auto lines = ParseConfigText(text, "t.conf");
    REQUIRE(lines.ok());
    auto c = BuildClusterConfig(*lines, {});
    REQUIRE(c.ok());
    CHECK(c->warnings.size() == (std::string(k.readers) == "ignored" ? 1u : 0u));
  }
}

TEST_CASE("config keys: an unknown key still warns with file:line", "[config_keys]") {
  auto lines = ParseConfigText(std::string(kBase) + "SchedulerIntreval=5\n", "t.conf");
  REQUIRE(lines.ok());
  auto c = BuildClusterConfig(*lines, {});
  REQUIRE(c.ok());
  REQUIRE(c->warnings.size() == 1);
  CHECK(c->warnings[0] == "t.conf:3: unknown key SchedulerIntreval; ignored");
  CHECK(FindConfigKey("tessera.conf", "", "controlmachine") == FindConfigKey("tessera.conf", "", "SlurmctldHost"));
  CHECK(FindConfigKey("tessera.conf", "", "nodeaddr") == nullptr);  // a NodeName key, not global
}

TEST_CASE("config check: gres.conf MIG keys a node would refuse", "[config_check]") {
  testing::TempDir d;
  std::string conf = d.Write("tessera.conf", kBase);
  auto check = [&](const std::string& gres) {
    d.Write("gres.conf", gres);
    auto c = LoadClusterConfig(conf);
    REQUIRE(c.ok());
    return CheckGresMig(*c);
  };
  const std::string gpu = "NodeName=n1 Name=gpu Type=a100 Count=1 MemoryMiB=40960 Simulated=yes ";
  CHECK(check(gpu + "MigEnabled=yes MigLayout=3g.20gb,2g.10gb\n").empty());
  auto no_enable = check(gpu + "MigLayout=3g.20gb\n");
  REQUIRE(no_enable.size() == 1);
  CHECK(no_enable[0] == d.path() + "/gres.conf:1: MigLayout= needs MigEnabled=yes");
  auto unknown = check(gpu + "MigEnabled=yes MigLayout=3g.20gb,5g.77gb\n");
  REQUIRE(unknown.size() == 1);
  CHECK_THAT(unknown[0], Catch::StartsWith(d.path() + "/gres.conf:1: MigLayout=3g.20gb,5g.77gb: MIG profile '5g.77gb' does not exist"));
  auto too_many = check(gpu + "MigEnabled=yes MigLayout=7g.40gb,7g.40gb\n");
  REQUIRE(too_many.size() == 1);
  auto no_table = check("NodeName=n1 Name=gpu Type=t4 Count=1 Simulated=yes MigEnabled=yes\n");
  REQUIRE(no_table.size() == 1);
  CHECK_THAT(no_table[0], Catch::Contains("GPU type 't4' has no known MIG profiles"));
}

}  // namespace
}  // namespace tessera
