// tacctmgr's operations on the association data (ctld/accounts/assoc_ops.h): pure, no store.
#include <catch2/catch.hpp>

#include <map>

#include "ctld/accounts/assoc_codec.h"
#include "ctld/accounts/assoc_ops.h"

using namespace tessera;
using namespace tessera::ctld::accounts;

namespace {

AssocRequest Req(std::string verb, std::string entity, std::vector<std::string> names,
                 std::vector<std::pair<std::string, std::string>> where = {},
                 std::vector<std::pair<std::string, std::string>> set = {}) {
  return {std::move(verb), std::move(entity), std::move(names), std::move(where), std::move(set)};
}

AssocDb Apply(const AssocDb& db, const AssocRequest& r) {
  auto out = ApplyChange(db, r);
  INFO(out.status().message());
  REQUIRE(out.ok());
  return out->next;
}

// root -> phys -> hep; alice in hep (default) and phys; QoS normal, high.
AssocDb Sample() {
  AssocDb db;
  db = Apply(db, Req("add", "qos", {"normal", "high"}));
  db = Apply(db, Req("add", "account", {"phys"}, {}, {{"Description", "Physics"}, {"GrpTRES", "gres/gpu=8"}}));
  db = Apply(db, Req("create", "account", {"hep"}, {}, {{"parent", "phys"}, {"MaxJobs", "3"}}));
  db = Apply(db, Req("add", "user", {"alice"}, {}, {{"Account", "hep,phys"}, {"QOS", "normal"}}));
  return db;
}

}  // namespace

TEST_CASE("add builds the tree, users get their first account as default") {
  AssocDb db = Sample();
  REQUIRE(db.accounts.count("hep"));
  CHECK(db.accounts.at("hep").parent == "phys");
  CHECK(db.accounts.at("hep").limits.max_jobs == 3);
  CHECK(db.accounts.at("hep").organization == "phys");  // from the parent, as sacctmgr
  CHECK(db.accounts.at("phys").description == "Physics");
  CHECK(db.accounts.at("phys").grp_tres.gpu == 8);
  CHECK(db.users.at("alice").default_account == "hep");
  CHECK(db.AccountsOf("alice") == std::vector<std::string>{"hep", "phys"});
  CHECK(db.assocs.at({"alice", "phys"}).qos == std::vector<std::string>{"normal"});
  CHECK(db.Validate().ok());
}

TEST_CASE("refusals name what is wrong and change nothing") {
  AssocDb db = Sample();
  auto bad = [&](const AssocRequest& r, const std::string& want) {
    auto out = ApplyChange(db, r);
    INFO(r.verb + " " + r.entity);
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().message().find(want) != std::string::npos);
  };
  bad(Req("add", "account", {"phys"}), "Nothing new added");
  bad(Req("add", "account", {"x"}, {}, {{"Parent", "ghost"}}), "Parent account 'ghost' doesn't exist");
  bad(Req("add", "account", {"x"}, {}, {{"Colour", "red"}}), "Unknown option: Colour");
  bad(Req("add", "account", {"x"}, {}, {{"MaxJobs", "lots"}}), "Bad value \"lots\" for MaxJobs");
  bad(Req("add", "user", {"bob"}, {}, {{"Account", "ghost"}}), "The account 'ghost' doesn't exist");
  bad(Req("add", "user", {"bob"}), "Need name of account");
  bad(Req("add", "user", {"bob"}, {}, {{"Account", "phys"}, {"QOS", "gold"}}), "Invalid qos specification: gold");
  bad(Req("add", "user", {"bob"}, {}, {{"Account", "phys"}, {"QOS", "normal"}, {"DefaultQOS", "high"}}),
      "default QOS high is not in the list of allowed QOS");
  bad(Req("modify", "account", {"phys"}, {}, {{"Parent", "hep"}}), "its own ancestor");
  bad(Req("modify", "account", {"ghost"}, {}, {{"MaxJobs", "1"}}), "Account 'ghost' doesn't exist");
  bad(Req("modify", "account", {"phys"}), "You didn't give me anything to set");
  bad(Req("modify", "user", {"alice"}, {}, {{"DefaultAccount", "chem"}}), "default account 'chem' of user 'alice'");
  bad(Req("delete", "account", {"phys"}), "sub-accounts (hep) and users (alice)");
  bad(Req("delete", "user", {"alice"}, {{"Account", "hep"}}), "You can not remove the default account (hep)");
  bad(Req("delete", "qos", {"normal"}), "QOS normal is used by user alice");
  bad(Req("delete", "account", {"root"}), "root account can not be removed");
  bad(Req("frobnicate", "account", {"x"}), "Invalid keyword: frobnicate");
  bad(Req("add", "widget", {"x"}), "No valid entity");
  CHECK(db == Sample());
}

TEST_CASE("modify sets limits on accounts and on a user's associations; delete removes") {
  AssocDb db = Sample();
  db = Apply(db, Req("modify", "user", {}, {{"Name", "alice"}, {"Account", "phys"}}, {{"MaxJobs", "2"}, {"QOS+", "high"}}));
  CHECK(db.assocs.at({"alice", "phys"}).limits.max_jobs == 2);
  CHECK(db.assocs.at({"alice", "phys"}).qos == std::vector<std::string>{"normal", "high"});
  CHECK(db.assocs.at({"alice", "hep"}).limits.max_jobs == -1);
  db = Apply(db, Req("update", "account", {}, {{"Names", "phys"}}, {{"GrpTRES", "gres/gpu=-1,cpu=64"}, {"Share", "5"}}));
  CHECK(db.accounts.at("phys").grp_tres.gpu == -1);
  CHECK(db.accounts.at("phys").grp_tres.cpu == 64);
  CHECK(db.accounts.at("phys").fairshare == 5);
  db = Apply(db, Req("modify", "user", {"alice"}, {}, {{"DefaultAccount", "phys"}}));
  db = Apply(db, Req("remove", "user", {"alice"}, {{"Account", "hep"}}));
  CHECK(db.AccountsOf("alice") == std::vector<std::string>{"phys"});
  db = Apply(db, Req("delete", "account", {"hep"}));
  CHECK_FALSE(db.accounts.count("hep"));
  db = Apply(db, Req("delete", "user", {"alice"}));
  CHECK(db.users.empty());
}

TEST_CASE("show: sacctmgr's columns, tree order for associations, where filters") {
  AssocDb db = Sample();
  auto rows = ShowRows(db, Req("show", "assoc", {}), "tessera");
  REQUIRE(rows.ok());
  std::vector<std::string> order;
  for (const auto& r : *rows) {
    std::string acct, user;
    for (const auto& [k, v] : r) {
      if (k == "Account") acct = v;
      if (k == "User") user = v;
    }
    order.push_back(acct + "/" + user);
  }
  CHECK(order == std::vector<std::string>{"root/", "phys/", "phys/alice", "hep/", "hep/alice"});
  auto users = ShowRows(db, Req("list", "user", {}, {{"DefaultAccount", "hep"}}), "tessera");
  REQUIRE(users.ok());
  REQUIRE(users->size() == 1);
  CHECK(users->front()[1] == std::make_pair(std::string("Def Acct"), std::string("hep")));
  auto accounts = ShowRows(db, Req("show", "account", {}, {{"Parent", "phys"}}), "tessera");
  REQUIRE(accounts.ok());
  REQUIRE(accounts->size() == 1);
  CHECK(accounts->front()[0].second == "hep");
  auto bad = ShowRows(db, Req("show", "account", {}, {{"Colour", "red"}}), "tessera");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "Unknown condition: Colour");
  CHECK(FormatWall(3600) == "01:00:00");
  CHECK(FormatWall(86400 + 61) == "1-00:01:01");
}

// ---------------------------------------------------------------- issue 16 §4 (h16g)


TEST_CASE("tacctmgr sets the QoS preemption fields; show, store and the live config have them") {
  AssocDb db = Sample();
  db = Apply(db, Req("add", "qos", {"low"}));
  db = Apply(db, Req("modify", "qos", {}, {{"Name", "high"}},
                     {{"Preempt", "low"}, {"PreemptMode", "requeue"}, {"GraceTime", "30"},
                      {"PreemptExemptTime", "0:10:00"}}));
  const auto& q = db.qos.at("high");
  CHECK(q.preempt == std::vector<std::string>{"low"});
  CHECK(q.preempt_mode == sched::PreemptModeKind::kRequeue);
  CHECK(q.grace_time == 30);
  CHECK(q.preempt_exempt_time == 600);
  // Stored: the rows decode to the same values.
  auto back = DecodeRows(EncodeRows(db));
  REQUIRE(back.ok());
  CHECK(back->qos.at("high").preempt == q.preempt);
  CHECK(back->qos.at("high").preempt_mode == sched::PreemptModeKind::kRequeue);
  CHECK(back->qos.at("high").grace_time == 30);
  CHECK(back->qos.at("high").preempt_exempt_time == 600);
  // The scheduler's live config takes them over tessera.conf's.
  sched::SchedConfig conf;
  conf.qos["high"].name = "high";
  conf.qos["high"].grace_time = 5;
  auto live = Overlay(conf, db);
  CHECK(live.qos.at("high").grace_time == 30);
  CHECK(live.qos.at("high").preempt == std::vector<std::string>{"low"});
  // show qos: sacctmgr's columns.
  auto rows = ShowRows(db, Req("show", "qos", {"high"}), "c");
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  std::map<std::string, std::string> col((*rows)[0].begin(), (*rows)[0].end());
  CHECK(col.at("Preempt") == "low");
  CHECK(col.at("PreemptMode") == "REQUEUE");
  CHECK(col.at("GraceTime") == "00:00:30");
  CHECK(col.at("PreemptExemptTime") == "00:10:00");
  // Refusals change nothing.
  auto bad = [&](std::vector<std::pair<std::string, std::string>> set, const std::string& want) {
    auto out = ApplyChange(db, Req("modify", "qos", {}, {{"Name", "high"}}, std::move(set)));
    REQUIRE_FALSE(out.ok());
    INFO(out.status().message());
    CHECK(out.status().message().find(want) != std::string::npos);
  };
  bad({{"Preempt", "ghost"}}, "ghost");
  bad({{"PreemptMode", "sometimes"}}, "sometimes");
  bad({{"GraceTime", "soon"}}, "GraceTime");
  // An empty Preempt= clears the list.
  db = Apply(db, Req("modify", "qos", {}, {{"Name", "high"}}, {{"Preempt", ""}}));
  CHECK(db.qos.at("high").preempt.empty());
}

TEST_CASE("tacctmgr Preempt+= and Preempt-= add and remove QoS names, as sacctmgr's") {
  AssocDb db = Sample();
  db = Apply(db, Req("add", "qos", {"low"}));
  db = Apply(db, Req("add", "qos", {"scav"}));
  db = Apply(db, Req("modify", "qos", {}, {{"Name", "high"}}, {{"Preempt", "low"}}));
  db = Apply(db, Req("modify", "qos", {}, {{"Name", "high"}}, {{"Preempt+", "scav,low"}}));
  CHECK(db.qos.at("high").preempt == std::vector<std::string>{"low", "scav"});  // no duplicate
  db = Apply(db, Req("modify", "qos", {}, {{"Name", "high"}}, {{"Preempt-", "low"}}));
  CHECK(db.qos.at("high").preempt == std::vector<std::string>{"scav"});
  db = Apply(db, Req("modify", "qos", {}, {{"Name", "high"}}, {{"Preempt-", "low"}}));  // absent: no-op
  CHECK(db.qos.at("high").preempt == std::vector<std::string>{"scav"});
  auto back = DecodeRows(EncodeRows(db));  // stored like Preempt=
  REQUIRE(back.ok());
  CHECK(back->qos.at("high").preempt == std::vector<std::string>{"scav"});
  // An unknown QoS is refused as with Preempt=, and nothing changes.
  auto out = ApplyChange(db, Req("modify", "qos", {}, {{"Name", "high"}}, {{"Preempt+", "ghost"}}));
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().message().find("ghost") != std::string::npos);
  CHECK(db.qos.at("high").preempt == std::vector<std::string>{"scav"});
}

TEST_CASE("a QoS row stored before the preemption fields keeps tessera.conf's") {
  AssocDb db;
  db.qos["high"].name = "high";  // as decoded from an older row: preempt_stored false
  sched::SchedConfig conf;
  conf.qos["high"].name = "high";
  conf.qos["high"].preempt = {"low"};
  conf.qos["high"].grace_time = 7;
  auto live = Overlay(conf, db);
  CHECK(live.qos.at("high").preempt == std::vector<std::string>{"low"});
  CHECK(live.qos.at("high").grace_time == 7);
}
