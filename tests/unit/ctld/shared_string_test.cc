// SharedString: one pooled copy per distinct text, freed with its last holder, safe to copy and
// drop from several threads; job records persist exactly as with plain strings.
#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include "ctld/jobs/job.h"
#include "ctld/jobs/job_codec.h"
#include "ctld/jobs/shared_string.h"

using namespace tessera::ctld;

TEST_CASE("SharedString keeps one copy per distinct text while it is held") {
  size_t base = SharedString::PoolSize();
  {
    SharedString a = std::string("/home/alice/project-with-a-long-path");
    SharedString b = "/home/alice/project-with-a-long-path";
    SharedString c = "/home/bob";
    CHECK(SharedString::PoolSize() == base + 2);
    CHECK(a == b);
    CHECK(a.c_str() == b.c_str());  // the same storage
    CHECK(!(a == c));
    CHECK(a == "/home/alice/project-with-a-long-path");
    CHECK(c + "/x" == "/home/bob/x");
    CHECK(c[0] == '/');
    SharedString d = a;
    a = c;
    CHECK(d == b);
    CHECK(a == c);
    b = SharedString();
    d.clear();
    CHECK(SharedString::PoolSize() == base + 1);  // alice's path had no holder left
  }
  CHECK(SharedString::PoolSize() == base);
  SharedString empty = "";
  CHECK(empty.empty());
  CHECK(empty.str().empty());
  CHECK(SharedString::PoolSize() == base);
}

TEST_CASE("SharedString copies and drops from many threads leave the pool consistent") {
  size_t base = SharedString::PoolSize();
  SharedString held = "shared-by-threads";
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&held, t] {
      for (int i = 0; i < 20000; ++i) {
        SharedString copy = held;                           // count only
        SharedString fresh = "shared-by-threads";           // pool lookup
        SharedString own = "thread-" + std::to_string(t);   // may be freed and made again
        REQUIRE(copy == fresh);
        REQUIRE(own.str() == "thread-" + std::to_string(t));
      }
    });
  for (auto& th : threads) th.join();
  CHECK(SharedString::PoolSize() == base + 1);
  held.clear();
  CHECK(SharedString::PoolSize() == base);
}

TEST_CASE("Job records with shared strings persist exactly like strings") {
  JobRecord r;
  r.job_id = 9;
  r.user = "alice";
  r.partition = "gpu";
  r.spec.workdir = "/home/alice/a/rather/long/working/directory";
  r.spec.stdout_pattern = "slurm-%j.out";
  std::string json = EncodeRecord(r);
  CHECK(json.find("\"workdir\":\"/home/alice/a/rather/long/working/directory\"") != std::string::npos);
  CHECK(json.find("\"name\":\"\"") != std::string::npos);  // empty still written
  auto back = DecodeRecord(json);
  REQUIRE(back.ok());
  CHECK(back->spec.workdir == r.spec.workdir);
  CHECK(back->user == "alice");
  CHECK(back->partition == std::string("gpu"));
  CHECK(back->spec.name.empty());
  CHECK(EncodeRecord(*back) == json);
}
