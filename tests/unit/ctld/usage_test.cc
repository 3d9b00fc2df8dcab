// Fair-share usage in ctld (issue 16 §3): charging, ended jobs, resets, and the SQLite round
// trip a restart goes through (migration 7).
#include <catch2/catch.hpp>

#include <cmath>

#include "common/cluster_config.h"
#include "common/config_file.h"
#include "ctld/usage.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {

sched::SchedConfig Cfg(int64_t hl, const std::string& reset = "NONE") {
  sched::SchedConfig c;
  c.priority_decay_half_life = hl;
  c.priority_usage_reset = reset;
  return c;
}

double Get(const UsageLedger& l, const std::string& a, const std::string& u) {
  auto it = l.usage().find({a, u});
  return it == l.usage().end() ? -1 : it->second;
}

}  // namespace

TEST_CASE("ledger: a running job charges billing x seconds; an ended one up to its end") {
  UsageLedger l;
  auto cfg = Cfg(0);
  l.Load({}, 0, 0, 1000, cfg, nullptr);
  std::vector<UsageLedger::ChargeJob> run = {{1, "phys", "alice", 2.0, 990}};
  l.Advance(1010, run, nullptr, cfg, nullptr);
  CHECK(Get(l, "phys", "alice") == 20);  // from the load (1000), not the start (990)
  run.push_back({2, "chem", "bob", 1.0, 1015});
  l.Advance(1020, run, nullptr, cfg, nullptr);
  CHECK(Get(l, "phys", "alice") == 40);
  CHECK(Get(l, "chem", "bob") == 5);     // from its start
  // Job 1 ended at 1025: charged up to then, not up to 1030.
  l.Advance(1030, {{2, "chem", "bob", 1.0, 1015}}, [](uint64_t id) { return id == 1 ? 1025 : 0; },
            cfg, nullptr);
  CHECK(Get(l, "phys", "alice") == 50);
  CHECK(Get(l, "chem", "bob") == 15);
}

TEST_CASE("ledger: a job that started and ended between two charges is charged once") {
  UsageLedger l;
  auto cfg = Cfg(0);
  l.Load({}, 0, 0, 1000, cfg, nullptr);
  UsageLedger::ChargeJob shortjob{3, "a", "u", 2.0, 1001, 1004};
  l.Advance(1005, {shortjob}, nullptr, cfg, nullptr);
  CHECK(Get(l, "a", "u") == 6);
  l.Advance(1010, {}, nullptr, cfg, nullptr);  // not charged again
  CHECK(Get(l, "a", "u") == 6);
  // A job charged while running and listed again with its end: charged up to the end, once.
  UsageLedger m;
  m.Load({}, 0, 0, 1000, cfg, nullptr);
  m.Advance(1005, {{4, "a", "u", 1.0, 1000}}, nullptr, cfg, nullptr);
  m.Advance(1010, {{4, "a", "u", 1.0, 1000, 1007}}, [](uint64_t) { return 1007; }, cfg, nullptr);
  CHECK(Get(m, "a", "u") == 7);
}

TEST_CASE("ledger: usage decays with the half-life; DAILY reset zeroes at midnight UTC") {
  UsageLedger l;
  auto cfg = Cfg(100);
  l.Load({{"a", "u", 1000}}, 900, 0, 1000, cfg, nullptr);  // 100 s of downtime decay
  CHECK(std::fabs(Get(l, "a", "u") - 1000 * std::pow(1 - 0.00693, 100)) < 1e-9);
  UsageLedger r;
  auto daily = Cfg(0, "DAILY");
  r.Load({{"a", "u", 500}}, 86400 - 10, 86400 - 20, 86400 - 10, daily, nullptr);
  r.Advance(86400 - 5, {{1, "a", "u", 1.0, 0}}, nullptr, daily, nullptr);
  CHECK(Get(r, "a", "u") == 505);
  r.Advance(86400 + 5, {{1, "a", "u", 1.0, 0}}, nullptr, daily, nullptr);
  CHECK(Get(r, "a", "u") == 5);  // reset at 86400, charged from there
}

TEST_CASE("ledger: persisted rows reload exactly; the downtime only decays") {
  TempDir d;
  std::string db = d.path + "/t.db";
  auto cfg = Cfg(0);
  double charged = 0;
  {
    auto s = Store::Open(db);
    REQUIRE(s.ok());
    UsageLedger l;
    Batch b;
    l.Load({}, 0, 0, 1000, cfg, &b);
    l.Advance(1007, {{1, "phys", "alice", 1.0 / 3, 0}}, nullptr, cfg, &b);
    charged = Get(l, "phys", "alice");
    REQUIRE(std::fabs(charged - 7.0 / 3) < 1e-12);
    REQUIRE((*s)->CommitSync(std::move(b)).ok());
  }
  auto s = Store::Open(db);
  REQUIRE(s.ok());
  auto rec = (*s)->Load();
  REQUIRE(rec.ok());
  REQUIRE(rec->usage.size() == 1);
  CHECK(rec->usage[0].usage == charged);  // bit for bit (text "%.17g")
  CHECK(rec->usage_last_charge == 1007);
  CHECK(rec->usage_last_reset == 1000);
  UsageLedger again;
  again.Load(rec->usage, rec->usage_last_charge, rec->usage_last_reset, 5000, cfg, nullptr);
  CHECK(Get(again, "phys", "alice") == charged);  // no decay configured: unchanged
  UsageLedger decayed;
  decayed.Load(rec->usage, rec->usage_last_charge, rec->usage_last_reset, 1107, Cfg(100),
               nullptr);
  CHECK(std::fabs(Get(decayed, "phys", "alice") - charged * std::pow(1 - 0.00693, 100)) < 1e-12);
}

TEST_CASE("JobTres: GPU types from Gres=, MIG instances by profile") {
  auto lines = ParseConfigText(
      "ClusterName=c\nSlurmctldHost=h\nNodeName=n1 CPUs=8 RealMemory=8000 Gres=gpu:a100:2\n"
      "PartitionName=p Nodes=n1\n", "t.conf");
  REQUIRE(lines.ok());
  auto cfg = BuildClusterConfig(*lines, {});
  INFO((cfg.ok() ? "" : cfg.status().message()));
  REQUIRE(cfg.ok());
  NodeTable nodes(*cfg);
  JobRecord j;
  j.alloc.push_back({"n1", 4, 1024, {1}, 1, {}, 0, 0});
  sched::TresCount t = JobTres(j, nodes);
  CHECK(t.cpu == 4);
  CHECK(t.mem_mib == 1024);
  CHECK(t.node == 1);
  CHECK(t.gpu == 1);
  CHECK(t.gpu_type.at("a100") == 1);
}
