// JobUserCache: lookups kept for the ttl per (uid, gid), failures not kept; LookUpJobUser on this
// machine's root entry.
#include <catch2/catch.hpp>

#include <map>

#include "noded/job_user.h"

using namespace tessera;
using namespace tessera::noded;

namespace {

struct CountingLookUp {
  std::map<uid_t, int> calls;
  bool fail = false;
  Result<JobUser> operator()(uid_t uid, gid_t gid) {
    ++calls[uid];
    if (fail) return NotFound("unknown uid " + std::to_string(uid));
    return JobUser{{"u" + std::to_string(uid) + "g" + std::to_string(gid), "/home", "/bin/sh"},
                   {gid}};
  }
};

}  // namespace

TEST_CASE("JobUserCache keeps a lookup for the ttl, per uid and gid") {
  CountingLookUp counting;
  JobUserCache cache([&](uid_t u, gid_t g) { return counting(u, g); }, 1000);
  const JobUser* a = cache.Get(1000, 100, 0);
  REQUIRE(a);
  CHECK(a->info.name == "u1000g100");
  CHECK(cache.Get(1000, 100, 999)->info.name == "u1000g100");
  CHECK(counting.calls[1000] == 1);
  CHECK(cache.Get(1000, 200, 999)->info.name == "u1000g200");  // another primary group
  CHECK(counting.calls[1000] == 2);
  CHECK(cache.Get(1000, 100, 1000)->info.name == "u1000g100");  // expired: looked up again
  CHECK(counting.calls[1000] == 3);
}

TEST_CASE("JobUserCache does not keep failures and drops an entry that now fails") {
  CountingLookUp counting;
  JobUserCache cache([&](uid_t u, gid_t g) { return counting(u, g); }, 1000);
  REQUIRE(cache.Get(7, 7, 0));
  counting.fail = true;
  CHECK(cache.Get(7, 7, 500));  // still fresh
  CHECK(cache.Get(7, 7, 1500) == nullptr);
  CHECK(cache.Get(7, 7, 1600) == nullptr);
  CHECK(counting.calls[7] == 3);
  counting.fail = false;
  CHECK(cache.Get(7, 7, 1700));
}

TEST_CASE("LookUpJobUser finds root with its groups and refuses an unknown uid") {
  auto root = LookUpJobUser(0, 0, true);
  REQUIRE(root.ok());
  CHECK(root->info.name == "root");
  CHECK(!root->groups.empty());
  CHECK(root->groups[0] == 0);
  CHECK(LookUpJobUser(0, 0, false)->groups.empty());
  auto none = LookUpJobUser(4'000'000'000u, 0, true);
  REQUIRE(!none.ok());
  CHECK(none.status().message() == "unknown uid 4000000000");
}
