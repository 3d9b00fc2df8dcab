// Reservations (issue 17 §1): occurrences, the per-node view, parsing and checking requests.
#include <catch2/catch.hpp>

#include "ctld/sched/reservation.h"
#include "ctld/sched/reservation_request.h"
#include "ctld/sched/scheduler.h"

namespace tessera::sched {
namespace {

ReservationSnap Daily(int64_t start, int64_t end) {
  ReservationSnap r;
  r.name = "d";
  r.start = start;
  r.end = end;
  r.nodes = {"n1"};
  r.users = {"ops"};
  r.flags = kResvDaily;
  return r;
}

ClusterSnapshot TwoNodes(int64_t now) {
  ClusterSnapshot c;
  c.now = now;
  c.partitions.push_back(PartitionSnap{"p"});
  for (const char* n : {"n1", "n2"}) {
    NodeSnap s;
    s.name = n;
    s.cpus_total = s.cpus_free = 4;
    s.mem_total = s.mem_free = 4000;
    s.partitions = {"p"};
    c.nodes.push_back(s);
  }
  return c;
}

JobSnap Job(uint64_t id, const std::string& user, const std::string& resv, int64_t limit) {
  JobSnap j;
  j.id = id;
  j.submit_time = static_cast<int64_t>(id);
  j.partition = "p";
  j.user = user;
  j.reservation = resv;
  j.time_limit = limit;
  j.groups.push_back(GroupReq{});
  j.groups[0].count = 4;
  j.groups[0].per_task.cpus = 1;
  return j;
}

}  // namespace

TEST_CASE("reservation occurrences repeat by period", "[resv]") {
  ReservationSnap r = Daily(1000, 2000);
  int64_t s = 0, e = 0;
  ResvOccurrence(r, 500, &s, &e);
  CHECK((s == 1000 && e == 2000));
  ResvOccurrence(r, 1999, &s, &e);
  CHECK((s == 1000 && e == 2000));
  ResvOccurrence(r, 2000, &s, &e);
  CHECK((s == 87400 && e == 88400));
  CHECK(ResvActiveAt(r, 1500));
  CHECK_FALSE(ResvActiveAt(r, 2000));
  CHECK(ResvActiveAt(r, 87400 + 86400 * 3));
  CHECK(ResvOverlaps(r, 2000, 87401));
  CHECK_FALSE(ResvOverlaps(r, 2000, 87400));
  CHECK_FALSE(ResvOverlaps(r, 0, 1000));
  r.flags = kResvWeekly;
  ResvOccurrence(r, 2000, &s, &e);
  CHECK(s == 1000 + 7 * 86400);
  r.flags = 0;
  CHECK_FALSE(ResvOverlaps(r, 2000, 1'000'000));
}

TEST_CASE("the view blocks other jobs, confines members, lets FLEX members out", "[resv]") {
  ClusterSnapshot c = TwoNodes(0);
  ReservationSnap r = Daily(1000, 2000);
  c.reservations = {r};
  ResvView v(c);
  int d = v.Find("d");
  REQUIRE(d == 0);
  CHECK(v.Find("none") == -1);
  CHECK_FALSE(v.Allows(-1, 0, 0, 1001));    // crosses the start on n1
  CHECK(v.Allows(-1, 0, 0, 1000));          // ends exactly at the start
  CHECK(v.Allows(-1, 1, 0, 100000));        // n2 is not reserved
  CHECK(v.Allows(d, 0, 1000, 5000));        // a member on its node (may run past the end)
  CHECK_FALSE(v.Allows(d, 1, 1000, 1100));  // ...but not elsewhere
  CHECK(v.StartOk(d, 1500));
  CHECK_FALSE(v.StartOk(d, 2500));
  CHECK(v.StartOk(d, 87400));               // the next day's occurrence
  c.reservations[0].flags |= kResvFlex;
  ResvView f(c);
  CHECK(f.Allows(0, 1, 0, 100));
  CHECK(f.StartOk(0, 2500));
  CHECK_FALSE(f.Allows(-1, 0, 0, 1001));    // FLEX does not open it to other jobs
  auto b = v.Boundaries(0, 90000);
  CHECK(b == std::vector<int64_t>{1000, 2000, 87400, 88400});
}

TEST_CASE("a member runs inside a later DAILY occurrence, not between them", "[resv]") {
  ClusterSnapshot c = TwoNodes(1000 + 86400 + 10);  // inside the second occurrence
  c.reservations = {Daily(1000, 2000)};
  c.pending = {Job(1, "ops", "d", 600), Job(2, "bob", "", 600)};
  c.nodes.pop_back();  // n1 only
  CycleResult r = RunCycle(c);
  REQUIRE(r.decisions.size() == 2);
  CHECK(r.decisions[0].kind == Decision::Kind::kStart);
  CHECK(r.decisions[1].kind == Decision::Kind::kPending);
  c.now = 2500;  // between occurrences: the member waits, the other job runs
  r = RunCycle(c);
  CHECK(r.decisions[0].reason == "Reservation");
  CHECK(r.decisions[1].kind == Decision::Kind::kStart);
}

TEST_CASE("MAINT reason only when the job would fit without the window", "[resv]") {
  ClusterSnapshot c = TwoNodes(1000);
  ReservationSnap m = Daily(2000, 3000);
  m.flags = kResvMaint;
  m.nodes = {"n1", "n2"};
  c.reservations = {m};
  c.pending = {Job(1, "u", "", 3600)};
  CycleResult r = RunCycle(c);
  CHECK(r.decisions[0].reason == "ReqNodeNotAvail, Reserved for maintenance");
  c.pending[0].groups[0].count = 12;  // larger than the cluster: resources, not maintenance
  r = RunCycle(c);
  CHECK(r.decisions[0].reason != "ReqNodeNotAvail, Reserved for maintenance");
  c.pending[0].groups[0].count = 4;
  c.pending[0].time_limit = 900;  // ends before the window
  r = RunCycle(c);
  CHECK(r.decisions[0].kind == Decision::Kind::kStart);
}

TEST_CASE("parsing reservation keys", "[resv]") {
  auto q = ParseResvRequest({{"reservationname", "a"}, {"StartTime", "100"}, {"Duration", "1:30:00"},
                             {"NODES", "n[1-2]"}, {"Users", "x,+y,-z"}, {"Flags", "maint,-FLEX"}});
  REQUIRE(q.ok());
  CHECK(q->name == "a");
  CHECK(*q->start == 100);
  CHECK(*q->duration == 5400);
  CHECK(q->users.set == std::vector<std::string>{"x"});
  CHECK(q->users.add == std::vector<std::string>{"y"});
  CHECK(q->users.remove == std::vector<std::string>{"z"});
  CHECK(q->flags_set == kResvMaint);
  CHECK(q->flags_remove == kResvFlex);
  CHECK(ParseResvRequest({{"Duration", "60"}})->duration == 3600);  // minutes, as Slurm
  CHECK(ParseResvRequest({{"Users-", "x"}})->users.remove == std::vector<std::string>{"x"});
  CHECK(ParseResvRequest({{"StartTime", "soon"}}).status().message().find("StartTime") != std::string::npos);
  CHECK(ParseResvRequest({{"NodeCnt", "0"}}).status().message().find("NodeCnt") != std::string::npos);
  CHECK(ParseResvRequest({{"Duration", "-5"}}).status().message().find("Duration") != std::string::npos);
  CHECK(ParseResvRequest({{"Nodes+", "n1"}}).status().message().find("Nodes+=") != std::string::npos);
  CHECK(ParseResvRequest({{"Flags", "WEEKLY,NOPE"}}).status().message().find("NOPE") != std::string::npos);
}

TEST_CASE("applying requests: defaults, names, and nothing changed on error", "[resv]") {
  ClusterSnapshot c = TwoNodes(5000);
  auto q = ParseResvRequest({{"Users", "alice"}, {"Duration", "10"}, {"NodeCnt", "1"}});
  REQUIRE(q.ok());
  auto r = ApplyResvRequest(*q, nullptr, c, c.now);
  REQUIRE(r.ok());
  CHECK(r->name == "alice_1");
  CHECK(r->start == 5000);  // StartTime defaults to now
  CHECK(r->end == 5600);
  CHECK(r->nodes == std::vector<std::string>{"n1"});
  c.reservations.push_back(*r);
  auto past = ParseResvRequest({{"Users", "a"}, {"StartTime", "10"}, {"Duration", "10"}, {"Nodes", "n2"}});
  CHECK(ApplyResvRequest(*past, nullptr, c, c.now).status().message().find("in the past") != std::string::npos);
  auto both = ParseResvRequest({{"EndTime", "9000"}, {"Duration", "10"}});
  CHECK(ApplyResvRequest(*both, &c.reservations[0], c, c.now).status().message().find("not both") != std::string::npos);
  auto all = ParseResvRequest({{"Users", "a"}, {"Duration", "10"}, {"Nodes", "ALL"}, {"Flags", "MAINT"}});
  auto ra = ApplyResvRequest(*all, nullptr, c, c.now);
  REQUIRE(ra.ok());
  CHECK(ra->nodes.size() == 2);
  auto bad_part = ParseResvRequest({{"Users", "a"}, {"Duration", "10"}, {"Nodes", "n2"}, {"PartitionName", "q"}});
  CHECK(ApplyResvRequest(*bad_part, nullptr, c, c.now).status().message().find("invalid partition") != std::string::npos);
  CHECK(c.reservations.size() == 1);
}

}  // namespace tessera::sched
