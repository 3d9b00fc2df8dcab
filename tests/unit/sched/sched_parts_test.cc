#include <catch2/catch.hpp>

#include <algorithm>

#include "ctld/sched/constraint.h"
#include "ctld/sched/dependency.h"
#include "ctld/sched/priority.h"

using namespace tessera;
using namespace tessera::sched;

namespace {
std::vector<std::string> F(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

TEST_CASE("constraint expressions follow Slurm's & | [..] and parentheses") {
  auto c = ParseConstraint("gpu&(a100|h100)");
  REQUIRE(c.ok());
  CHECK(c->Matches(F({"gpu", "h100"})));
  CHECK_FALSE(c->Matches(F({"h100"})));
  CHECK_FALSE(c->Matches(F({"gpu", "v100"})));
  auto p = ParseConstraint("a|b&c");  // & binds tighter
  REQUIRE(p.ok());
  CHECK(p->Matches(F({"a"})));
  CHECK_FALSE(p->Matches(F({"b"})));
  auto m = ParseConstraint("ib&[rack1|rack2]");
  REQUIRE(m.ok());
  REQUIRE(m->Alternatives().size() == 2);
  CHECK(m->Matches(F({"ib", "rack2"}), 1));
  CHECK_FALSE(m->Matches(F({"ib", "rack2"}), 0));
  CHECK_FALSE(m->Matches(F({"rack1"})));
  for (const char* bad : {"a&", "|a", "(a", "a)", "a*2", "[a|b", "a b", "[a|]"}) {
    INFO(bad);
    CHECK_FALSE(ParseConstraint(bad).ok());
  }
  CHECK(ParseConstraint("a*2").status().message().find("counts") != std::string::npos);
}

TEST_CASE("dependencies parse and evaluate with , = all and ? = any") {
  auto d = ParseDependency("afterok:10:11,afterany:12");
  REQUIRE(d.ok());
  CHECK(d->items.size() == 3);
  std::map<uint64_t, DepJobState> st = {{10, DepJobState::kCompletedOk},
                                        {11, DepJobState::kRunning},
                                        {12, DepJobState::kEndedNotOk}};
  auto look = [&](uint64_t id) { return st.count(id) ? st[id] : DepJobState::kUnknown; };
  CHECK(EvalDependency(*d, look, true) == DepOutcome::kWaiting);
  st[11] = DepJobState::kCompletedOk;
  CHECK(EvalDependency(*d, look, true) == DepOutcome::kSatisfied);
  st[11] = DepJobState::kEndedNotOk;
  CHECK(EvalDependency(*d, look, true) == DepOutcome::kNever);
  auto any = ParseDependency("afterok:11?afternotok:10");
  REQUIRE(any.ok());
  CHECK(EvalDependency(*any, look, true) == DepOutcome::kNever);
  st[10] = DepJobState::kPending;
  CHECK(EvalDependency(*any, look, true) == DepOutcome::kWaiting);
  auto after = ParseDependency("after:10");
  CHECK(EvalDependency(*after, look, true) == DepOutcome::kWaiting);
  st[10] = DepJobState::kRunning;
  CHECK(EvalDependency(*after, look, true) == DepOutcome::kSatisfied);
  auto single = ParseDependency("singleton");
  REQUIRE(single.ok());
  CHECK(EvalDependency(*single, look, false) == DepOutcome::kWaiting);
  CHECK(EvalDependency(*ParseDependency("afterok:999"), look, true) == DepOutcome::kSatisfied);
  for (const char* bad : {"afterok", "afterok:x", "before:1", "afterok:1,afterany:2?after:3", "singleton:4"}) {
    INFO(bad);
    CHECK_FALSE(ParseDependency(bad).ok());
  }
}

TEST_CASE("multifactor priority adds weighted factors; admin priority overrides") {
  SchedConfig cfg;
  cfg.weight_age = 1000;
  cfg.weight_qos = 100;
  cfg.weight_partition = 10;
  cfg.priority_max_age = 1000;
  cfg.qos["normal"] = QosConfig{"normal", 5};
  cfg.qos["high"] = QosConfig{"high", 10};
  PriorityContext ctx{2000, 100, 0, 2, 10};
  JobSnap j;
  j.submit_time = 1500;  // age 500/1000 -> 500
  j.qos = "normal";      // 5/10 -> 50
  CHECK(MultifactorPriority(j, 1, 0, 1, cfg, ctx) == 500 + 50 + 5);
  j.nice = 20;
  CHECK(MultifactorPriority(j, 1, 0, 2, cfg, ctx) == 500 + 50 + 10 - 20);
  j.submit_time = 0;  // age capped at PriorityMaxAge
  CHECK(MultifactorPriority(j, 1, 0, 2, cfg, ctx) == 1000 + 50 + 10 - 20);
  j.priority = 7;
  CHECK(MultifactorPriority(j, 1, 0, 2, cfg, ctx) == 7);
}
