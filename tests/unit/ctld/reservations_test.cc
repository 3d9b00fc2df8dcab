// ReservationTable (issue 17 §1): durable create/update/delete, refusals that change nothing,
// expiry and rolling forward, reload after a restart.
#include <catch2/catch.hpp>

#include "ctld/reservations.h"
#include "ctld/sched/reservation.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {
sched::ClusterSnapshot Cluster() {
  sched::ClusterSnapshot c;
  c.partitions.push_back(sched::PartitionSnap{"p"});
  for (const char* n : {"n1", "n2"}) {
    sched::NodeSnap s;
    s.name = n;
    s.cpus_total = s.cpus_free = 4;
    s.partitions = {"p"};
    c.nodes.push_back(s);
  }
  return c;
}
sched::ResvKeyValues KV(std::initializer_list<std::pair<std::string, std::string>> l) { return l; }
}  // namespace

TEST_CASE("reservations are durable, refusals change nothing, ended ones go") {
  TempDir d;
  std::string db = d.path + "/t.db";
  {
    auto s = Store::Open(db);
    REQUIRE(s.ok());
    ReservationTable t(s->get());
    auto r = t.Create(KV({{"ReservationName", "m"}, {"StartTime", "2000"}, {"Duration", "60"},
                          {"Nodes", "n1"}, {"Users", "root,bob"}, {"Flags", "MAINT"}}),
                      Cluster(), 1000);
    REQUIRE(r.ok());
    REQUIRE(t.Create(KV({{"ReservationName", "d"}, {"StartTime", "2000"}, {"Duration", "10"},
                         {"Nodes", "n2"}, {"Accounts", "ops"}, {"Flags", "DAILY"}}),
                     Cluster(), 1000).ok());
    // Refused: an unknown node; a clash with "d"; nothing is written or changed.
    CHECK(t.Create(KV({{"ReservationName", "x"}, {"Duration", "10"}, {"Nodes", "n9"}, {"Users", "a"}}),
                   Cluster(), 1000).status().message() == "invalid node name specified: n9");
    CHECK(t.Update(KV({{"ReservationName", "m"}, {"Nodes", "n[1-2]"}, {"Flags", "-MAINT"}}),
                   Cluster(), 1000).status().message().find("reservation d holds node n2") !=
          std::string::npos);
    CHECK(t.Update(KV({{"ReservationName", "zz"}, {"Users", "a"}}), Cluster(), 1000).status().code() ==
          Code::kNotFound);
    REQUIRE(t.Update(KV({{"ReservationName", "m"}, {"Users", "-bob"}}), Cluster(), 1000).ok());
    CHECK(t.Find("m")->users == std::vector<std::string>{"root"});
    CHECK(t.Find("m")->flags == sched::kResvMaint);
    CHECK(t.Delete("m", true).message().find("Reservation busy") != std::string::npos);
    CHECK(t.all().size() == 2);
  }
  auto s = Store::Open(db);
  REQUIRE(s.ok());
  auto rec = (*s)->Load();
  REQUIRE(rec.ok());
  ReservationTable t(s->get());
  std::vector<std::string> notes;
  t.Load(*rec, &notes);
  CHECK(notes.empty());
  REQUIRE(t.all().size() == 2);
  const sched::ReservationSnap* m = t.Find("m");
  REQUIRE(m);
  CHECK((m->start == 2000 && m->end == 5600 && m->nodes == std::vector<std::string>{"n1"}));
  CHECK(m->users == std::vector<std::string>{"root"});
  CHECK(t.Find("d")->accounts == std::vector<std::string>{"ops"});
  // After 5600 "m" is gone; the DAILY "d" rolls to the occurrence that ends after now.
  CHECK(t.Expire(6000));
  CHECK_FALSE(t.Find("m"));
  CHECK(t.Find("d")->start == 2000 + 86400);
  CHECK_FALSE(t.Expire(6001));
  REQUIRE(t.Delete("d", false).ok());
  auto again = (*s)->Load();
  REQUIRE(again.ok());
  CHECK(again->reservations.empty());
}

TEST_CASE("reservation records round-trip and bad ones are refused") {
  sched::ReservationSnap r;
  r.name = "a";
  r.start = 5;
  r.end = 9;
  r.nodes = {"n1", "n2"};
  r.users = {"u"};
  r.accounts = {"x", "y"};
  r.flags = sched::kResvFlex | sched::kResvWeekly;
  r.partition = "p";
  auto back = DecodeReservation(EncodeReservation(r));
  REQUIRE(back.ok());
  CHECK((back->name == "a" && back->start == 5 && back->end == 9 && back->nodes == r.nodes &&
         back->users == r.users && back->accounts == r.accounts && back->flags == r.flags &&
         back->partition == "p"));
  CHECK_FALSE(DecodeReservation("[1]").ok());
  CHECK_FALSE(DecodeReservation("{\"name\":\"a\"}").ok());
}
