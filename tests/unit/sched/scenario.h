#pragma once
// Scheduler scenarios as data (format: tests/scenarios/README.md). A scenario is a cluster, a
// queue, a config and the decisions one RunCycle must produce.
#include <string>
#include <vector>

#include "common/status.h"
#include "ctld/sched/scheduler.h"

namespace tessera::sched::testing {

struct Expect {
  std::string kind;                // start, backfill, pending, reserve, tasks, priority, ...
  uint64_t job = 0;
  std::vector<std::string> args;   // the rest of the line, split on blanks
  int line = 0;
};

struct Scenario {
  std::string file;
  std::string name;
  ClusterSnapshot snap;
  std::vector<std::string> config_text;  // tessera.conf lines
  std::vector<Expect> expects;
};

Result<Scenario> ParseScenario(const std::string& path);
// Runs the scenario; returns one message per unmet expectation ("file:line: ...").
std::vector<std::string> RunScenario(const Scenario& s);
// acct helper: "expect assoc ID key=value..." (scenario_assoc.cc); "" = met.
std::string CheckAssocExpect(const Expect& e, const JobSnap& job, const SchedConfig& cfg);

}  // namespace tessera::sched::testing
