// tessera-sim with reservations (issue 17 §1, sim/reservations.h).
#include <catch2/catch.hpp>

#include "sim/engine.h"
#include "tests/unit/sched/sim_fixtures.h"
#include "sim/reservations.h"

using namespace tessera;

namespace {
sched::ClusterSnapshot OneNode() { return sched::testing::SimOneNode(); }
sim::TraceJob Job(int64_t submit, int64_t runtime, uint32_t cpus) {
  sim::TraceJob j;
  j.submit = submit;
  j.runtime = j.req_time = runtime;
  j.cpus = cpus;
  j.user = "u";
  return j;
}
}  // namespace

TEST_CASE("sim: a maintenance window holds back jobs that would cross it, and ends on time") {
  sched::ClusterSnapshot c = OneNode();
  REQUIRE(sim::LoadReservations("# window\nReservationName=m StartTime=+100 Duration=1 "
                                "Nodes=n1 Users=root Flags=MAINT\n",
                                "resv.txt", 1000, &c).ok());
  REQUIRE(c.reservations.size() == 1);
  CHECK(c.reservations[0].start == 1100);
  CHECK(c.reservations[0].end == 1160);
  // job 1 fits before the window; job 2 (200 s) would cross it: it starts when it ends, an
  // instant with no submission or job end (the sim wakes at reservation boundaries).
  std::vector<sim::TraceJob> trace = {Job(1000, 50, 2), Job(1010, 200, 2)};
  auto run = sim::Simulate(c, "p", sched::SchedConfig{}, trace, "default");
  REQUIRE(run.error.empty());
  CHECK(run.jobs[0].start == 1000);
  CHECK(run.jobs[1].start == 1160);
  auto without = sim::Simulate(OneNode(), "p", sched::SchedConfig{}, trace, "default");
  CHECK(without.jobs[1].start == 1010);
}

TEST_CASE("sim: bad reservation lines name the file and line") {
  sched::ClusterSnapshot c = OneNode();
  Status st = sim::LoadReservations("ReservationName=a StartTime=+0 Duration=10 Nodes=n1 Users=x\n"
                                    "ReservationName=b StartTime=+0 Duration=10 Nodes=n7 Users=x\n",
                                    "r.txt", 0, &c);
  CHECK(st.message().find("r.txt:2: invalid node name specified: n7") != std::string::npos);
  CHECK(c.reservations.empty());  // nothing of a refused file is kept
  st = sim::LoadReservations("Nodes\n", "q.txt", 0, &c);
  CHECK(st.message().find("q.txt:1: expected KEY=VALUE") != std::string::npos);
  REQUIRE(sim::LoadReservations("ReservationName=a StartTime=+0 Duration=10 Nodes=n1 Users=x "
                                "Flags=DAILY\n", "r.txt", 0, &c).ok());
  CHECK(sim::NextReservationBoundary(c, 5) == 600);
  CHECK(sim::NextReservationBoundary(c, 600) == 86400);
}
