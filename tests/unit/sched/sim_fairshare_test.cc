// tessera-sim with fair share (issue 16 §3): usage charged in virtual time changes the order;
// --accounts modes; the per-account share table.
#include <catch2/catch.hpp>

#include "sim/engine.h"
#include "sim/fairshare.h"

using namespace tessera;

namespace {

sched::ClusterSnapshot OneCpu() {
  sched::ClusterSnapshot c;
  sched::NodeSnap n;
  n.name = "n1";
  n.cpus_total = n.cpus_free = 1;
  n.mem_total = n.mem_free = 1000;
  n.partitions = {"p"};
  c.nodes = {n};
  c.partitions = {{"p", true, 0, -1, -1, 1}};
  return c;
}

sim::TraceJob Job(uint64_t id, int64_t submit, const std::string& user, const std::string& acct) {
  sim::TraceJob j;
  j.id = id;
  j.submit = submit;
  j.runtime = j.req_time = 100;
  j.cpus = 1;
  j.user = user;
  j.account = acct;
  return j;
}

}  // namespace

// heavy submits three 100 s jobs at 0, light one at 1. Without fair share (age first, then
// submit order) light runs last, at 300; with it, heavy has 100 s of usage at 100 and light none,
// so light starts at 100.
TEST_CASE("sim: fair share starts a light account's job before a heavy one's backlog") {
  std::vector<sim::TraceJob> t = {Job(1, 0, "heavy", "A"), Job(2, 0, "heavy", "A"),
                                  Job(3, 0, "heavy", "A"), Job(4, 1, "light", "B")};
  sched::SchedConfig off;
  off.weight_age = 1000;
  sched::SchedConfig on = off;
  on.weight_fairshare = 10000;
  auto a = sim::Simulate(OneCpu(), "p", off, t, "off");
  auto b = sim::Simulate(OneCpu(), "p", on, t, "on");
  REQUIRE(a.error.empty());
  REQUIRE(b.error.empty());
  CHECK(a.jobs[3].start == 300);
  CHECK(b.jobs[3].start == 100);
  auto table = sim::ComputeShareTable(b, 100);
  REQUIRE(table.accounts == std::vector<std::string>{"A", "B"});
  REQUIRE(table.rows.size() >= 2);
  CHECK(table.rows[0][0] == 1.0);  // 0-100: heavy alone
  CHECK(table.rows[1][1] == 1.0);  // 100-200: light
  CHECK(table.mean_wait_s[1] == 99);
}

TEST_CASE("sim: --accounts modes") {
  std::vector<sim::TraceJob> t = {Job(1, 0, "u7", "g1"), Job(2, 0, "u8", "g1")};
  t[1].qos = "ls";
  auto m = t;
  REQUIRE(sim::AssignAccounts("user-mod:4", m).ok());
  CHECK(m[0].account == "a3");
  CHECK(m[1].account == "a0");
  auto u = t;
  REQUIRE(sim::AssignAccounts("user", u).ok());
  CHECK(u[0].account == "u7");
  auto q = t;
  REQUIRE(sim::AssignAccounts("qos", q).ok());
  CHECK(q[1].account == "ls");
  auto g = t;
  REQUIRE(sim::AssignAccounts("group", g).ok());
  CHECK(g[0].account == "g1");
  CHECK_FALSE(sim::AssignAccounts("user-mod:0", g).ok());
  CHECK_FALSE(sim::AssignAccounts("team", g).ok());
}
