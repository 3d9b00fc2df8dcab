// tessera-sim runs the preempt action (issue 16 §4, sim/preempt.h): victims per mode in virtual
// time, counted in the report.
#include <catch2/catch.hpp>

#include "common/config_file.h"
#include "ctld/sched/sched_config.h"
#include "sim/engine.h"
#include "tests/unit/sched/sim_fixtures.h"
#include "sim/report.h"

using namespace tessera;

namespace {

sched::ClusterSnapshot OneNode() { return sched::testing::SimOneNode(); }

sched::SchedConfig Conf(const std::string& low_mode, int grace) {
  std::string text = "PreemptType=preempt/qos\n"
                     "QOSName=low Priority=1 PreemptMode=" + low_mode +
                     " GraceTime=" + std::to_string(grace) + "\n"
                     "QOSName=high Priority=10 Preempt=low\n";
  auto lines = ParseConfigText(text, "test.conf");
  REQUIRE(lines.ok());
  auto c = sched::BuildSchedConfig(*lines);
  REQUIRE(c.ok());
  return *c;
}

// A low job takes the whole node at 0 for 1000 s; a high job asks the whole node at 10 for 100 s.
std::vector<sim::TraceJob> Trace() {
  sim::TraceJob low, high;
  low.id = 1, low.submit = 0, low.runtime = 1000, low.req_time = 2000, low.cpus = 4;
  low.user = "a", low.account = "x", low.qos = "low";
  high.id = 2, high.submit = 10, high.runtime = 100, high.req_time = 200, high.cpus = 4;
  high.user = "b", high.account = "y", high.qos = "high";
  return {low, high};
}

}  // namespace

TEST_CASE("sim preemption: REQUEUE victim runs again after its preemptor") {
  auto run = sim::Simulate(OneNode(), "p", Conf("REQUEUE", 0), Trace(), "requeue");
  REQUIRE(run.error.empty());
  CHECK(run.preemptions["REQUEUE"] == 1);
  CHECK(run.jobs[1].start == 10);
  CHECK(run.jobs[1].end == 110);
  CHECK(run.jobs[0].requeues == 1);
  CHECK(run.jobs[0].start == 110);   // its whole runtime anew
  CHECK(run.jobs[0].end == 1110);
  auto m = sim::Compute(run);
  CHECK(m.preemptions.at("REQUEUE") == 1);
}

TEST_CASE("sim preemption: SUSPEND victim resumes when its preemptor ends, end pushed") {
  auto run = sim::Simulate(OneNode(), "p", Conf("SUSPEND", 0), Trace(), "suspend");
  REQUIRE(run.error.empty());
  CHECK(run.preemptions["SUSPEND"] == 1);
  CHECK(run.jobs[1].start == 10);
  CHECK(run.jobs[1].end == 110);
  CHECK(run.jobs[0].start == 0);
  CHECK(run.jobs[0].suspended_s == 100);
  CHECK(run.jobs[0].end == 1100);
  CHECK(run.jobs[0].preempted == "");  // suspended, not ended
}

TEST_CASE("sim preemption: CANCEL victim ends after its GraceTime, then the preemptor starts") {
  auto run = sim::Simulate(OneNode(), "p", Conf("CANCEL", 30), Trace(), "cancel");
  REQUIRE(run.error.empty());
  CHECK(run.preemptions["CANCEL"] == 1);
  CHECK(run.jobs[0].end == 40);
  CHECK(run.jobs[0].preempted == "CANCEL");
  CHECK(run.jobs[1].start == 40);
  CHECK(run.jobs[1].end == 140);
}

TEST_CASE("sim without PreemptType preempts nothing") {
  auto run = sim::Simulate(OneNode(), "p", sched::SchedConfig{}, Trace(), "none");
  REQUIRE(run.error.empty());
  CHECK(run.preemptions.empty());
  CHECK(run.jobs[1].start == 1000);
}
