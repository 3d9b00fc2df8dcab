// The slurm.conf-syntax lexer/parser (config_file.h): pairs, comments, quotes, continuation,
// Include, and errors that name file:line.
#include "common/config_file.h"

#include <catch2/catch.hpp>

#include "temp_dir.h"

namespace tessera {
namespace {

std::vector<ConfigLine> Parse(const std::string& text, const std::string& file = "t.conf") {
  auto r = ParseConfigText(text, file);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("config: Key=Value pairs, one record per line", "[config]") {
  auto lines = Parse("ClusterName=demo\nNodeName=n[1-4] CPUs=8 RealMemory=16000\n");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].Where() == "t.conf:1");
  CHECK(lines[0].Head() == "clustername");
  CHECK(*lines[0].Find("clustername") == "demo");
  CHECK(lines[1].line == 2);
  REQUIRE(lines[1].pairs.size() == 3);
  CHECK(lines[1].Head() == "nodename");
  CHECK(lines[1].pairs[0].value == "n[1-4]");
  CHECK(*lines[1].Find("cpus") == "8");
  CHECK(lines[1].Find("weight") == nullptr);
}

TEST_CASE("config: keys are case-insensitive and spelling is kept for messages", "[config]") {
  auto lines = Parse("SLURMCTLDPORT=7000 slurmctldhost=head\n");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].pairs[0].key == "slurmctldport");
  CHECK(lines[0].pairs[0].raw_key == "SLURMCTLDPORT");
  CHECK(*lines[0].Find("slurmctldhost") == "head");
  // Values keep their case.
  CHECK(Parse("ClusterName=MiXeD")[0].pairs[0].value == "MiXeD");
}

TEST_CASE("config: comments, blank lines and escaped #", "[config]") {
  auto lines = Parse("# a comment\n\n   \nClusterName=x # trailing\nReason=a\\#b\n");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].line == 4);
  CHECK(lines[0].pairs.size() == 1);
  CHECK(*lines[0].Find("clustername") == "x");
  CHECK(*lines[1].Find("reason") == "a#b");
}

TEST_CASE("config: quoted values keep blanks and #", "[config]") {
  auto lines = Parse("NodeName=n1 Reason=\"disk # 3 broken\" Weight=2\n");
  REQUIRE(lines.size() == 1);
  CHECK(*lines[0].Find("reason") == "disk # 3 broken");
  CHECK(*lines[0].Find("weight") == "2");
  auto empty = Parse("Reason=\"\"\n");
  CHECK(*empty[0].Find("reason") == "");
}

TEST_CASE("config: backslash continues a line and the record keeps its first line", "[config]") {
  auto lines = Parse("# x\nNodeName=n1 \\\n   CPUs=4 \\\n   RealMemory=100\nClusterName=c\n");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].line == 2);
  CHECK(lines[0].pairs.size() == 3);
  CHECK(*lines[0].Find("realmemory") == "100");
  CHECK(lines[1].line == 5);
  // Continuation on the last line of the file still yields the record.
  auto last = Parse("ClusterName=c \\");
  REQUIRE(last.size() == 1);
  CHECK(*last[0].Find("clustername") == "c");
}

TEST_CASE("config: CRLF line endings are accepted", "[config]") {
  auto lines = Parse("ClusterName=c\r\nSlurmctldPort=1\r\n");
  REQUIRE(lines.size() == 2);
  CHECK(*lines[0].Find("clustername") == "c");
}

TEST_CASE("config: errors name file:line", "[config]") {
  auto r = ParseConfigText("ClusterName=a\n# ok\nFoo\n", "/etc/tessera/tessera.conf");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kInvalidArgument);
  CHECK_THAT(r.status().message(),
             Catch::StartsWith("/etc/tessera/tessera.conf:3: expected Key=Value"));
  CHECK_THAT(r.status().message(), Catch::Contains("\"Foo\""));

  auto noKey = ParseConfigText("\n=value\n", "a.conf");
  REQUIRE_FALSE(noKey.ok());
  CHECK_THAT(noKey.status().message(), Catch::StartsWith("a.conf:2: expected Key=Value"));

  auto quote = ParseConfigText("A=1\nReason=\"open\n", "q.conf");
  REQUIRE_FALSE(quote.ok());
  CHECK(quote.status().message() == "q.conf:2: unterminated quote");
}

TEST_CASE("config: Include splices a file relative to the including file", "[config]") {
  testing::TempDir dir;
  dir.Write("sub/nodes.conf", "NodeName=n[1-2] CPUs=2\nInclude more.conf\n");
  dir.Write("sub/more.conf", "PartitionName=p Nodes=n[1-2]\n");
  std::string main = dir.Write("tessera.conf", "ClusterName=c\nInclude sub/nodes.conf\nA=b\n");
  auto r = ParseConfigFile(main);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  REQUIRE(r->size() == 4);
  CHECK((*r)[0].Head() == "clustername");
  CHECK((*r)[1].Head() == "nodename");
  CHECK((*r)[1].file == dir.path() + "/sub/nodes.conf");
  CHECK((*r)[1].line == 1);
  CHECK((*r)[2].Head() == "partitionname");
  CHECK((*r)[2].file == dir.path() + "/sub/more.conf");
  CHECK((*r)[3].Head() == "a");
  CHECK((*r)[3].Where() == main + ":3");
}

TEST_CASE("config: Include with an absolute path and case-insensitive keyword", "[config]") {
  testing::TempDir dir;
  std::string inc = dir.Write("inc.conf", "B=2\n");
  std::string main = dir.Write("main.conf", "A=1\ninclude " + inc + "\n");
  auto r = ParseConfigFile(main);
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  CHECK(*(*r)[1].Find("b") == "2");
}

TEST_CASE("config: Include errors", "[config]") {
  testing::TempDir dir;
  SECTION("missing file names the including line") {
    std::string main = dir.Write("main.conf", "A=1\nInclude nope.conf\n");
    auto r = ParseConfigFile(main);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kNotFound);
    CHECK_THAT(r.status().message(), Catch::StartsWith(main + ":2: cannot open config file"));
    CHECK_THAT(r.status().message(), Catch::Contains("nope.conf"));
  }
  SECTION("a cycle is detected") {
    dir.Write("b.conf", "B=1\nInclude a.conf\n");
    std::string a = dir.Write("a.conf", "A=1\nInclude b.conf\n");
    auto r = ParseConfigFile(a);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("include cycle"));
    CHECK_THAT(r.status().message(), Catch::StartsWith(dir.path() + "/b.conf:2:"));
  }
  SECTION("a file including itself") {
    std::string a = dir.Write("self.conf", "Include self.conf\n");
    auto r = ParseConfigFile(a);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("include cycle"));
  }
  SECTION("Include takes exactly one path") {
    std::string a = dir.Write("x.conf", "Include a b\n");
    auto r = ParseConfigFile(a);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == a + ":1: Include takes exactly one path");
  }
  SECTION("the top-level file is missing") {
    auto r = ParseConfigFile(dir.path() + "/absent.conf");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kNotFound);
    CHECK_THAT(r.status().message(), Catch::Contains("absent.conf"));
  }
}

TEST_CASE("config: ToLower", "[config]") { CHECK(ToLower("NodeName") == "nodename"); }

}  // namespace
}  // namespace tessera
