// Hostlist expansion and compression, with Slurm's own golden vectors
// (slurm/testsuite and hostlist.c documentation).
#include "common/hostlist.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace tessera {
namespace {

using Names = std::vector<std::string>;

Names Expand(const std::string& expr) {
  auto r = ExpandHostlist(expr);
  INFO(expr << " -> " << r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("hostlist: Slurm's golden round trip with ranges and plain names", "[hostlist]") {
  const std::string expr = "node[0,3-4,8],linux,linux[2,5]";
  Names want = {"node0", "node3", "node4", "node8", "linux", "linux2", "linux5"};
  CHECK(Expand(expr) == want);
  CHECK(CompressHostlist(want) == expr);
}

TEST_CASE("hostlist: plain ranges and lists", "[hostlist]") {
  CHECK(Expand("host[1-3],host5") == Names{"host1", "host2", "host3", "host5"});
  CHECK(CompressHostlist({"host1", "host2", "host3", "host5"}) == "host[1-3,5]");
  CHECK(Expand("a,b,c") == Names{"a", "b", "c"});
  CHECK(Expand("single") == Names{"single"});
  CHECK(Expand("n7") == Names{"n7"});
  CHECK(Expand("n[5]") == Names{"n5"});
  CHECK(Expand("") == Names{});
  CHECK(CompressHostlist({}) == "");
}

TEST_CASE("hostlist: zero padding is kept both ways", "[hostlist]") {
  CHECK(Expand("n[01-03]") == Names{"n01", "n02", "n03"});
  CHECK(CompressHostlist({"n01", "n02", "n03"}) == "n[01-03]");
  CHECK(Expand("gpu[008-011]") == Names{"gpu008", "gpu009", "gpu010", "gpu011"});
  CHECK(CompressHostlist({"gpu008", "gpu009", "gpu010", "gpu011"}) == "gpu[008-011]");
  // Different widths are different hosts: n1 and n01 never merge.
  CHECK(CompressHostlist({"n1", "n02"}) == "n[1,02]");
}

TEST_CASE("hostlist: unpadded ranges cross a digit boundary as one range", "[hostlist]") {
  // Slurm: hostlist_ranged_string of node1..node100 is "node[1-100]".
  Names hosts;
  for (int i = 1; i <= 100; ++i) hosts.push_back("node" + std::to_string(i));
  CHECK(CompressHostlist(hosts) == "node[1-100]");
  CHECK(Expand("node[1-100]") == hosts);
  CHECK(CompressHostlist({"n9", "n10"}) == "n[9-10]");
  CHECK(Expand("n[9-10]") == Names{"n9", "n10"});
}

TEST_CASE("hostlist: duplicates and order are preserved (c 2-6 then 6)", "[hostlist]") {
  Names hosts = {"c2", "c3", "c4", "c5", "c6", "c6"};
  CHECK(Expand("c[2-6,6]") == hosts);
  CHECK(CompressHostlist(hosts) == "c[2-6,6]");
  // Order as written, not sorted.
  CHECK(Expand("n[3,1]") == Names{"n3", "n1"});
  CHECK(CompressHostlist({"n3", "n1"}) == "n[3,1]");
}

TEST_CASE("hostlist: lone hosts print plain and prefixes split groups", "[hostlist]") {
  CHECK(CompressHostlist({"n1"}) == "n1");
  CHECK(CompressHostlist({"login"}) == "login");
  CHECK(CompressHostlist({"a1", "a2", "b1", "a3"}) == "a[1-2],b1,a3");
}

TEST_CASE("hostlist: several bracket groups give the cartesian product", "[hostlist]") {
  CHECK(Expand("r[1-2]n[1-2]") == Names{"r1n1", "r1n2", "r2n1", "r2n2"});
  CHECK(Expand("rack[1-2]-gpu") == Names{"rack1-gpu", "rack2-gpu"});
}

TEST_CASE("hostlist: bad input is rejected with a message naming the problem", "[hostlist]") {
  struct Bad {
    const char* expr;
    const char* fragment;
  };
  for (const Bad& b : {Bad{"n[1-", "unbalanced '['"}, Bad{"n[3-1]", "descending range \"3-1\""},
                       Bad{"n]", "unbalanced ']'"}, Bad{"n[a-b]", "bad range \"a-b\""},
                       Bad{"n[]", "bad range"}, Bad{"n[1-2", "unbalanced '['"},
                       Bad{"n[[1]]", "nested '['"}, Bad{"n[1,,2]", "bad range"}}) {
    auto r = ExpandHostlist(b.expr);
    INFO(b.expr);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK_THAT(r.status().message(), Catch::Contains(b.fragment));
  }
}

TEST_CASE("hostlist: size bound protects against huge expressions", "[hostlist]") {
  auto r = ExpandHostlist("n[0-99999999]");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("too large"));
  auto prod = ExpandHostlist("a[0-999]b[0-999]c[0-9]");
  REQUIRE_FALSE(prod.ok());
  CHECK_THAT(prod.status().message(), Catch::Contains("too many"));
}

}  // namespace
}  // namespace tessera
