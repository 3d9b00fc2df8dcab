// Hierarchical queues (issue 16 §2, ctld/sched/queues.h): deserved shares against hand-computed
// examples, hard limits, the reclaim admission rule, and the steps RunCycle adds.
#include <catch2/catch.hpp>

#include "common/config_file.h"
#include "ctld/sched/queues.h"
#include "ctld/sched/scheduler.h"
#include "sim/engine.h"
#include "sim/fairshare.h"

using namespace tessera;
using namespace tessera::sched;

namespace {

SchedConfig Cfg(const std::string& text) {
  auto lines = ParseConfigText(text, "q.conf");
  REQUIRE(lines.ok());
  auto c = BuildSchedConfig(*lines);
  INFO(c.status().message());
  REQUIRE(c.ok());
  return *c;
}

// One node with `gpus` GPUs and 64 CPUs.
ClusterSnapshot Gpus(int gpus) {
  ClusterSnapshot s;
  s.now = 1000;
  NodeSnap n;
  n.name = "n1";
  n.cpus_total = n.cpus_free = 64;
  n.mem_total = n.mem_free = 64000;
  for (int i = 0; i < gpus; ++i) n.gpus.push_back({uint32_t(i), "a100", true, true, "", 0});
  n.partitions = {"p"};
  s.nodes.push_back(n);
  s.partitions.push_back({"p"});
  return s;
}

RunningSnap Run(uint64_t id, const std::string& account, uint32_t gpus) {
  RunningSnap r;
  r.id = id;
  r.account = account;
  r.partition = "p";
  r.nodes.push_back({"n1", 1, 0, gpus, {}, {}});
  return r;
}

const QueueShare& Share(const std::vector<QueueShare>& v, const std::string& a) {
  for (const auto& q : v)
    if (q.account == a) return q;
  FAIL("no queue " << a);
  return v.front();
}

std::string kStr(const char* s) { return s; }

}  // namespace

TEST_CASE("queues: deserved = guarantee + weight-proportional part of the idle rest, capped by demand") {
  SchedConfig c = Cfg("AccountName=a Guarantee=gres/gpu=4 Weight=1\nAccountName=b Guarantee=gres/gpu=4 Weight=3\n"
                      "AccountName=c Guarantee=gres/gpu=2\n");
  std::string a = "a", b = "b";
  QueueTable t;
  // a wants 20, b wants 20, c nothing: 16 GPUs; guarantees 4 + 4, the idle 8 by weight 1:3.
  t.Build(c, Gpus(16), {{&a, {1, 0, 20}}, {&b, {1, 0, 20}}});
  auto v = t.Shares();
  CHECK(Share(v, "a").deserved.gpu == 6);
  CHECK(Share(v, "b").deserved.gpu == 10);
  CHECK(Share(v, "c").deserved.gpu == 0);  // no demand: its guarantee is lent
  CHECK(Share(v, "c").guarantee.gpu == 2);
}

TEST_CASE("queues: what an account cannot use goes to the others (water filling)") {
  SchedConfig c = Cfg("AccountName=a Guarantee=gres/gpu=2\nAccountName=b Guarantee=gres/gpu=2\n");
  std::string a = "a", b = "b";
  QueueTable t;
  t.Build(c, Gpus(16), {{&a, {1, 0, 3}}, {&b, {1, 0, 30}}});
  auto v = t.Shares();
  CHECK(Share(v, "a").deserved.gpu == 3);
  CHECK(Share(v, "b").deserved.gpu == 13);
}

TEST_CASE("queues: the hard limit caps the deserved share and refuses jobs") {
  SchedConfig c = Cfg("AccountName=a Limit=gres/gpu=5\nAccountName=b\n");
  std::string a = "a", b = "b";
  QueueTable t;
  ClusterSnapshot s = Gpus(16);
  s.running.push_back(Run(1, "a", 4));
  t.Build(c, s, {{&a, {1, 0, 8}}, {&b, {1, 0, 4}}});
  auto v = t.Shares();
  CHECK(Share(v, "a").deserved.gpu == 5);
  CHECK(Share(v, "b").deserved.gpu == 4);
  int qa = t.Find("a");
  CHECK(t.OverLimit(qa, {1, 0, 1}).empty());
  CHECK(t.OverLimit(qa, {1, 0, 2}) == kStr("AssocGrpGRES"));
}

TEST_CASE("queues: children divide their parent's deserved share") {
  SchedConfig c = Cfg("AccountName=org1 Guarantee=gres/gpu=8\nAccountName=org2 Guarantee=gres/gpu=8\n"
                      "AccountName=t1 Parent=org1 Guarantee=gres/gpu=2\nAccountName=t2 Parent=org1 Guarantee=gres/gpu=6\n");
  std::string t1 = "t1", t2 = "t2", org2 = "org2";
  QueueTable t;
  t.Build(c, Gpus(16), {{&t1, {1, 0, 16}}, {&t2, {1, 0, 16}}, {&org2, {1, 0, 16}}});
  auto v = t.Shares();
  CHECK(Share(v, "org1").deserved.gpu == 8);
  CHECK(Share(v, "t1").deserved.gpu == 2);
  CHECK(Share(v, "t2").deserved.gpu == 6);
  CHECK(Share(v, "t1").depth == 1);
  CHECK(Share(v, "t1").parent == "org1");
}

TEST_CASE("queues: guarantees over capacity are scaled down in proportion, per level, with a warning") {
  SchedConfig c = Cfg("AccountName=org1 Guarantee=gres/gpu=8\nAccountName=org2 Guarantee=gres/gpu=16\n"
                      "AccountName=t1 Parent=org1 Guarantee=gres/gpu=6\nAccountName=t2 Parent=org1 Guarantee=gres/gpu=6\n");
  std::string t1 = "t1", t2 = "t2", org2 = "org2";
  QueueTable t;
  // 12 GPUs: org1 8 + org2 16 = 24 -> scaled by 1/2: 4 and 8; under org1, 6 + 6 = 12 over its
  // scaled 4 -> 2 and 2.
  t.Build(c, Gpus(12), {{&t1, {1, 0, 16}}, {&t2, {1, 0, 16}}, {&org2, {1, 0, 16}}});
  auto v = t.Shares();
  CHECK(Share(v, "org1").deserved.gpu == 4);
  CHECK(Share(v, "org2").deserved.gpu == 8);
  CHECK(Share(v, "t1").deserved.gpu == 2);
  CHECK(Share(v, "t2").deserved.gpu == 2);
  CHECK(Share(v, "org1").guarantee.gpu == 8);  // shown as configured
  REQUIRE(t.warnings().size() == 2);
  CHECK(t.warnings()[0] == "queues: the guarantees under the top level sum to gres/gpu=24, over the 12 there are; scaled by 0.50");
  CHECK(t.warnings()[1] == "queues: the guarantees under org1 sum to gres/gpu=12, over the 4 there are; scaled by 0.33");
  // The top level within the capacity: only org1's children (12 over its 8) are scaled.
  QueueTable u;
  u.Build(c, Gpus(48), {{&t1, {1, 0, 16}}, {&t2, {1, 0, 16}}});
  REQUIRE(u.warnings().size() == 1);
  CHECK(u.warnings()[0].find("under org1") != std::string::npos);
  CHECK(Share(u.Shares(), "t1").deserved.gpu >= 4);  // its scaled guarantee, plus idle GPUs
  // Nothing over: no warning, guarantees as configured.
  SchedConfig ok = Cfg("AccountName=a Guarantee=gres/gpu=6\nAccountName=b Guarantee=gres/gpu=6\n");
  std::string a = "a";
  QueueTable w;
  w.Build(ok, Gpus(12), {{&a, {1, 0, 6}}});
  CHECK(w.warnings().empty());
  CHECK(Share(w.Shares(), "a").deserved.gpu == 6);
}

TEST_CASE("queues: node= counts the nodes of each job, only when some account sets it") {
  SchedConfig c = Cfg("AccountName=a Limit=node=2\nAccountName=b\n");
  QueueTable t;
  ClusterSnapshot s = Gpus(16);
  s.running.push_back(Run(1, "a", 4));  // one node
  t.Build(c, s, {});
  int qa = t.Find("a");
  CHECK(t.OverLimit(qa, {1, 0, 0, 1}).empty());
  CHECK(t.OverLimit(qa, {1, 0, 0, 2}) == kStr("AssocGrpNodeLimit"));
  SchedConfig none = Cfg("AccountName=a Limit=gres/gpu=64\nAccountName=b\n");
  QueueTable n;
  n.Build(none, s, {});
  CHECK(n.OverLimit(n.Find("a"), {1, 0, 0, 100}).empty());
}

TEST_CASE("queues: a victim's account must stay at or above its deserved share") {
  SchedConfig c = Cfg("AccountName=a Guarantee=gres/gpu=8\nAccountName=b Guarantee=gres/gpu=8\n");
  std::string a = "a", b = "b";
  ClusterSnapshot s = Gpus(16);
  s.running = {Run(1, "b", 4), Run(2, "b", 4), Run(3, "b", 8)};
  QueueTable t;
  t.Build(c, s, {{&a, {1, 0, 4}}, {&b, {0, 0, 0}}});
  // a deserves 4 (its demand), b 12: b may lose 4 GPUs, no more.
  t.BeginSearch(t.Find("a"), {1, 0, 4});
  CHECK_FALSE(t.VictimAllowed(t.Find("b"), {1, 0, 8}));
  CHECK(t.VictimAllowed(t.Find("b"), {1, 0, 4}));
  CHECK_FALSE(t.VictimAllowed(t.Find("b"), {1, 0, 4}));  // a second 4 would take b below
  // b (at its share) may not take anything back from a.
  t.BeginSearch(t.Find("b"), {1, 0, 4});
  CHECK_FALSE(t.VictimAllowed(t.Find("a"), {1, 0, 4}));
}

TEST_CASE("queues: RunCycle adds the queue plugin and the reclaim action only when configured") {
  std::vector<std::string> plugins = {"priority", "gang"}, actions = {"enqueue", "allocate", "backfill"};
  QueueSteps(plugins, actions);
  CHECK(plugins == std::vector<std::string>{"queue", "priority", "gang"});
  CHECK(actions == std::vector<std::string>{"enqueue", "allocate", "reclaim", "backfill"});
  QueueSteps(plugins, actions);  // idempotent
  CHECK(actions.size() == 4);
  CHECK_FALSE(QueuesActive(Cfg("AccountName=a Fairshare=3\n")));
  CHECK(QueuesActive(Cfg("AccountName=a Weight=2\n")));
  CHECK(QueuesActive(Cfg("AccountName=a Reclaimable=no\n")));
  ClusterSnapshot s = Gpus(4);
  CHECK(RunCycle(s, Cfg("AccountName=a Fairshare=3\n"), Registry::Builtin()).queues.empty());
  CHECK_FALSE(RunCycle(s, Cfg("AccountName=a Guarantee=gres/gpu=2\n"), Registry::Builtin()).queues.empty());
}

TEST_CASE("sim: the share table's queue columns (deserved by weight, held, borrowed)") {
  sched::ClusterSnapshot c;
  sched::NodeSnap n;
  n.name = "n1";
  n.cpus_total = n.cpus_free = 4;
  n.mem_total = n.mem_free = 4000;
  n.partitions = {"p"};
  c.nodes = {n};
  c.partitions = {{"p", true, 0, -1, -1, 1}};
  std::vector<sim::TraceJob> t;
  for (uint64_t i = 1; i <= 8; ++i) {
    sim::TraceJob j;
    j.id = i;
    j.submit = 0;
    j.runtime = j.req_time = 100;
    j.cpus = 1;
    j.user = "u";
    j.account = i <= 4 ? "A" : "B";  // A's jobs first: FIFO alone would give A all 4 CPUs
    t.push_back(j);
  }
  SchedConfig cfg = Cfg("AccountName=A Weight=1\nAccountName=B Weight=3\n");
  auto run = sim::Simulate(c, "p", cfg, t, "queues");
  REQUIRE(run.error.empty());
  auto table = sim::ComputeShareTable(run, 100);
  REQUIRE(table.queue_accounts == std::vector<std::string>{"A", "B"});
  REQUIRE(!table.queue_rows.empty());
  CHECK(table.queue_rows[0][0].deserved == Approx(1));  // 4 CPUs by weight 1:3
  CHECK(table.queue_rows[0][1].deserved == Approx(3));
  CHECK(table.queue_rows[0][0].allocated == Approx(1));
  CHECK(table.queue_rows[0][1].allocated == Approx(3));
  CHECK(table.queue_rows[0][1].borrowed == Approx(3));  // no guarantee: all of it is borrowed
}
