// Configs that used to load silently and are refused now, with file:line (hardening issue,
// part 5): a NUL byte in a value, two nodes on one address and port.
#include <catch2/catch.hpp>

#include <string>

#include "common/cluster_config.h"
#include "temp_dir.h"

namespace tessera {
namespace {

const char kNodes[] = "NodeName=n1 NodeAddr=127.0.0.1 Port=17001\n";

TEST_CASE("config refusals: a NUL byte is refused with file:line and column", "[config]") {
  std::string text = std::string("ClusterName=a\nSlurmUser=te") + '\0' + "st\n" + kNodes;
  auto r = ParseConfigText(text, "tessera.conf");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kInvalidArgument);
  CHECK(r.status().message() == "tessera.conf:2: NUL byte at column 13; a config file is text");
}

TEST_CASE("config refusals: a NUL byte in an included file names that file", "[config]") {
  testing::TempDir d;
  d.Write("nodes.conf", std::string("# nodes\n") + kNodes + "NodeName=n2 Features=a" + '\0' + "\n");
  std::string conf = d.Write("tessera.conf", "ClusterName=a\nInclude nodes.conf\n");
  auto r = LoadClusterConfig(conf);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::StartsWith(d.path() + "/nodes.conf:3: NUL byte"));
}

TEST_CASE("config refusals: two nodes on one NodeAddr and Port are refused", "[config]") {
  auto build = [](const std::string& text) {
    auto lines = ParseConfigText(text, "tessera.conf");
    REQUIRE(lines.ok());
    return BuildClusterConfig(*lines, {});
  };
  auto r = build(std::string(kNodes) + "NodeName=n2 NodeAddr=127.0.0.1 Port=17001\n");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kInvalidArgument);
  CHECK(r.status().message() ==
        "tessera.conf:2: node n2 has NodeAddr 127.0.0.1 and Port 17001, as node n1 "
        "(tessera.conf:1); give each node its own address or port");
  // One line, one address for several nodes, the default port: the same collision.
  r = build("NodeName=a[1-2] NodeAddr=10.0.0.9\n");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(),
             Catch::StartsWith("tessera.conf:1: node a2 has NodeAddr 10.0.0.9 and Port 6818, "
                               "as node a1"));
  // Same address, other ports; other addresses, same port: fine.
  CHECK(build(std::string(kNodes) + "NodeName=n2 NodeAddr=127.0.0.1 Port=17002\n").ok());
  CHECK(build("NodeName=a[1-2] NodeAddr=10.0.0.[1-2]\n").ok());
}

}  // namespace
}  // namespace tessera
