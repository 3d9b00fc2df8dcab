// Association lines, setters and AccountingStorageEnforce (ctld/sched/sched_config_assoc.cc).
#include <catch2/catch.hpp>

#include "common/config_file.h"
#include "ctld/sched/assoc.h"
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

TEST_CASE("AccountName= takes the association keys and UserName= lines make associations") {
  auto c = Build(
      "AccountingStorageEnforce=associations,limits\n"
      "QOSName=normal\nQOSName=high\n"
      "AccountName=phys Parent=root Description=Physics Organization=Sci Fairshare=10 "
      "GrpTRES=gres/gpu=16 GrpJobs=5 GrpSubmitJobs=50 MaxTRESPerJob=cpu=64,mem=100G MaxJobs=4 "
      "MaxSubmitJobs=20 MaxWall=1-0 QOS=normal,high DefaultQOS=normal Guarantee=gres/gpu=8 "
      "Limit=gres/gpu=32 Weight=3 Reclaimable=no\n"
      "AccountName=hep Parent=phys\n"
      "UserName=alice Accounts=phys,hep DefaultAccount=hep MaxJobs=2 QOS=normal\n");
  REQUIRE(c.ok());
  CHECK(c->warnings.empty());
  CHECK(c->enforce_associations);
  CHECK(c->enforce_limits);
  CHECK_FALSE(c->enforce_qos);
  const AccountConfig& p = c->accounts.at("phys");
  CHECK(p.parent.empty());  // root
  CHECK(p.description == "Physics");
  CHECK(p.organization == "Sci");
  CHECK(p.fairshare == 10);
  CHECK(p.grp_tres.gpu == 16);
  CHECK(p.limits.grp_tres.gpu == 16);
  CHECK(p.grp_jobs == 5);
  CHECK(p.limits.grp_jobs == 5);
  CHECK(p.limits.grp_submit_jobs == 50);
  CHECK(p.limits.max_tres_per_job.cpu == 64);
  CHECK(p.limits.max_tres_per_job.mem_mib == 100 * 1024);
  CHECK(p.limits.max_jobs == 4);
  CHECK(p.limits.max_submit_jobs == 20);
  CHECK(p.limits.max_wall == 86400);
  CHECK(p.qos == std::vector<std::string>{"normal", "high"});
  CHECK(p.default_qos == "normal");
  CHECK(p.guarantee.gpu == 8);
  CHECK(p.limit.gpu == 32);
  CHECK(p.weight == 3);
  CHECK_FALSE(p.reclaimable);
  REQUIRE(c->user_assocs.size() == 2);
  CHECK(c->default_account.at("alice") == "hep");
  AssocIndex idx(*c);
  REQUIRE(idx.Find("alice", "hep") != nullptr);
  CHECK(idx.Find("alice", "hep")->limits.max_jobs == 2);
  CHECK(idx.Effective("alice", "hep").max_jobs == 2);
  CHECK(idx.Effective("alice", "hep").max_wall == 86400);  // inherited from phys
  CHECK(idx.Effective("bob", "hep").max_jobs == 4);        // no association: the account's
  CHECK(idx.AllowedQos("alice", "hep") == std::vector<std::string>{"normal"});
}

TEST_CASE("bad association lines are refused naming the line and what is wrong") {
  auto bad = [](const std::string& text, const std::string& want) {
    auto c = Build(text);
    INFO(text);
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().message().find(want) != std::string::npos);
  };
  bad("AccountName=a MaxJobs=many\n", "t.conf:1: invalid value \"many\" for MaxJobs");
  bad("AccountName=a GrpTRES=gres/gpu=x\n", "TRES item \"gres/gpu=x\"");
  bad("AccountName=a MaxTRES=widgets=3\n", "unknown TRES \"widgets\"");
  bad("AccountName=a Reclaimable=maybe\n", "expected yes or no");
  bad("UserName=bob\n", "t.conf:1: user bob needs Accounts=");
  bad("AccountName=a\nUserName=bob Accounts=ghost\n", "t.conf:2: user bob: unknown account ghost");
  bad("AccountName=a\nUserName=bob Accounts=a\nUserName=bob Accounts=a\n", "twice");
  bad("QOSName=normal\nAccountName=a QOS=gold\n", "account a: unknown QOS gold");
  bad("AccountingStorageEnforce=associations,bogus\n", "unknown option bogus");
}

TEST_CASE("MergeTres merges item by item and -1 clears") {
  TresLimit t;
  REQUIRE(MergeTres("cpu=4,gres/gpu=2", t).ok());
  REQUIRE(MergeTres("gres/gpu=-1,mem=2G", t).ok());
  CHECK(t.cpu == 4);
  CHECK(t.gpu == -1);
  CHECK(t.mem_mib == 2048);
  CHECK(FormatTres(t) == "cpu=4,mem=2G");
  REQUIRE(MergeTres("-1", t).ok());
  CHECK(t.Unlimited());
  CHECK_FALSE(MergeTres("cpu", t).ok());
}

TEST_CASE("enforce flags: qos and limits imply associations; nothing enforced without the key") {
  auto c = Build("AccountingStorageEnforce=qos\n");
  REQUIRE(c.ok());
  CHECK(c->enforce_associations);
  CHECK(c->enforce_qos);
  CHECK_FALSE(c->enforce_limits);
  auto d = Build("AccountName=a\n");
  REQUIRE(d.ok());
  CHECK_FALSE(d->enforce_associations);
  JobSnap j;
  j.user = "nobody";
  j.account = "ghost";
  CHECK(CheckAssocSubmit(j, {}, *d).ok());
}
