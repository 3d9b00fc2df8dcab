// The durable association store (ctld/accounts/assoc_manager.h) over a real SQLite state.
#include <catch2/catch.hpp>

#include "common/config_file.h"
#include "ctld/accounts/assoc_manager.h"
#include "tests/unit/ctld/test_util.h"

using namespace tessera;
using namespace tessera::ctld;
using namespace tessera::ctld::accounts;

namespace {

sched::SchedConfig Conf(const std::string& text) {
  auto lines = ParseConfigText(text, "tessera.conf");
  REQUIRE(lines.ok());
  auto c = sched::BuildSchedConfig(*lines);
  INFO(c.status().message());
  REQUIRE(c.ok());
  return *c;
}

const char kConf[] =
    "QOSName=normal Default=YES\n"
    "AccountName=phys MaxJobs=4\n"
    "AccountName=hep Parent=phys\n"
    "UserName=alice Accounts=hep\n";

struct Opened {
  std::unique_ptr<Store> store;
  Recovered rec;
};

Opened Open(const std::string& path) {
  auto s = Store::Open(path);
  REQUIRE(s.ok());
  auto rec = (*s)->Load();
  REQUIRE(rec.ok());
  return {std::move(*s), std::move(*rec)};
}

AssocRequest Req(std::string verb, std::string entity, std::vector<std::string> names,
                 std::vector<std::pair<std::string, std::string>> set = {}) {
  return {std::move(verb), std::move(entity), std::move(names), {}, std::move(set)};
}

}  // namespace

TEST_CASE("the store is seeded from the config once, then survives restarts with tacctmgr's changes") {
  TempDir dir;
  std::string path = dir.path + "/t.db";
  sched::SchedConfig base = Conf(kConf);
  {
    Opened o = Open(path);
    AssocManager m(o.store.get());
    std::vector<std::string> notes;
    REQUIRE(m.Start(o.rec, base, &notes).ok());
    CHECK(notes.empty());
    CHECK(m.db().accounts.size() == 2);
    auto live = m.Live(base);
    CHECK(live->default_account.at("alice") == "hep");
    CHECK(live->accounts.at("phys").limits.max_jobs == 4);
    REQUIRE(m.Change(Req("add", "user", {"bob"}, {{"Account", "phys"}}), false).ok());
    REQUIRE(m.Change(Req("modify", "account", {"phys"}, {{"MaxJobs", "7"}}), false).ok());
    REQUIRE(m.Change(Req("delete", "user", {"alice"}), false).ok());
    REQUIRE(m.Change(Req("delete", "account", {"hep"}), false).ok());
    auto dry = m.Change(Req("add", "account", {"chem"}), true);
    REQUIRE(dry.ok());
    CHECK(dry->rows == 1);
    CHECK(dry->message.find("Adding Account(s)") != std::string::npos);
    CHECK_FALSE(m.db().accounts.count("chem"));  // a dry run writes nothing
  }
  Opened o = Open(path);
  AssocManager m(o.store.get());
  std::vector<std::string> notes;
  REQUIRE(m.Start(o.rec, base, &notes).ok());
  // The store is the truth: the changed limit stays, deleted entries do not come back from
  // their config lines, and the config's differing line is reported.
  CHECK(m.db().accounts.at("phys").limits.max_jobs == 7);
  CHECK_FALSE(m.db().accounts.count("hep"));
  CHECK_FALSE(m.db().users.count("alice"));
  CHECK(m.db().users.at("bob").default_account == "phys");
  CHECK_FALSE(m.db().accounts.count("chem"));
  REQUIRE(notes.size() >= 1);
  CHECK(notes[0].find("tessera.conf:2: account phys differs from the association store") !=
        std::string::npos);
  // A line added to the config later is imported.
  std::vector<std::string> more;
  REQUIRE(m.MergeConfig(Conf(std::string(kConf) + "AccountName=bio\n"), &more).ok());
  CHECK(m.db().accounts.count("bio"));
}

TEST_CASE("a change whose write fails is refused and changes nothing") {
  TempDir dir;
  Opened o = Open(dir.path + "/t.db");
  AssocManager m(o.store.get());
  REQUIRE(m.Start(o.rec, Conf(kConf), nullptr).ok());
  o.store->FailWritesForTest("disk I/O error");
  auto r = m.Change(Req("add", "account", {"chem"}), false);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("disk I/O error") != std::string::npos);
  CHECK_FALSE(m.db().accounts.count("chem"));
  o.store->FailWritesForTest("");
  REQUIRE(m.Change(Req("add", "account", {"chem"}), false).ok());
  CHECK(m.db().accounts.count("chem"));
}
