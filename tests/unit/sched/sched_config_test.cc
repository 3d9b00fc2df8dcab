#include <catch2/catch.hpp>

#include "common/config_file.h"
#include "ctld/sched/registry.h"
#include "ctld/sched/sched_config.h"

using namespace tessera;
using namespace tessera::sched;

namespace {
Result<SchedConfig> Build(const std::string& text) {
  auto lines = ParseConfigText(text, "t.conf");
  REQUIRE(lines.ok());
  return BuildSchedConfig(*lines);
}
}  // namespace

TEST_CASE("scheduler keys, QoS and account lines are parsed") {
  auto c = Build(
      "ClusterName=x\nSchedulerActions=enqueue,allocate\nSchedulerParameters=bf_reservation_depth=4,bf_window=60,bf_continue\n"
      "PriorityWeightAge=1000 PriorityWeightQOS=500\nPriorityMaxAge=1-0\n"
      "QOSName=high Priority=100 MaxWall=2:00:00 MaxJobsPerUser=2 MaxTRESPerUser=gres/gpu=8,cpu=64 Default=YES\n"
      "AccountName=phys GrpTRES=gres/gpu=16\nAccountName=hep Parent=phys\n");
  REQUIRE(c.ok());
  CHECK(c->actions == std::vector<std::string>{"enqueue", "allocate"});
  CHECK(c->bf_reservation_depth == 4);
  CHECK(c->bf_window == 3600);
  CHECK(c->weight_age == 1000);
  CHECK(c->weight_qos == 500);
  CHECK(c->priority_max_age == 86400);
  REQUIRE(c->FindQos("") != nullptr);
  CHECK(c->FindQos("")->name == "high");
  CHECK(c->FindQos("high")->max_wall == 7200);
  CHECK(c->FindQos("high")->max_tres_per_user.gpu == 8);
  CHECK(c->FindQos("high")->max_tres_per_user.cpu == 64);
  CHECK(c->accounts.at("hep").parent == "phys");
  CHECK(c->accounts.at("phys").grp_tres.gpu == 16);
  REQUIRE(c->warnings.size() == 1);  // bf_continue
  CHECK(c->warnings[0].find("bf_continue") != std::string::npos);
}

TEST_CASE("unknown or unimplemented action and plugin names are errors naming them") {
  auto c = Build("\nSchedulerActions=enqueue,alocate\n");
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("t.conf:2") != std::string::npos);
  CHECK(c.status().message().find("\"alocate\"") != std::string::npos);
  c = Build("SchedulerPlugins=priority,magic\n");
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("\"magic\"") != std::string::npos);
  c = Build("SchedulerActions=enqueue,allocate,reclaim\n");  // issue 16 §2: reclaim exists now
  CHECK(c.ok());
  SchedConfig cfg;
  cfg.plugins = {"nope"};
  Status st = Registry::Builtin().Validate(cfg);
  CHECK(st.code() == Code::kNotFound);
  CHECK(st.message().find("nope") != std::string::npos);
}

TEST_CASE("bad values are reported with file, line and key") {
  auto c = Build("QOSName=q MaxTRESPerUser=gres/gpu=lots\n");
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("t.conf:1") != std::string::npos);
  CHECK(c.status().message().find("MaxTRESPerUser") != std::string::npos);
  CHECK_FALSE(Build("PriorityWeightAge=-3\n").ok());
  CHECK_FALSE(Build("SchedulerParameters=bf_reservation_depth=x\n").ok());
  CHECK_FALSE(Build("AccountName=a Parent=ghost\n").ok());
  CHECK_FALSE(Build("QOSName=a\nQOSName=a\n").ok());
  CHECK_FALSE(ParseTres("licenses=3").ok());
}
