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

// Fair share (issue 16 §3, scenario_fairshare.h): one usage record.
struct ScenarioUsage {
  std::string account, user;
  double value = 0;     // usage line: raw usage at `at`
  int64_t at = -1;      // -1 = now
  double billing = 0;   // charge line: units per second over [from, at]
  int64_t from = -1;    // -1 = a usage line
};

struct Scenario {
  std::string file;
  std::string name;
  ClusterSnapshot snap;
  std::vector<std::string> config_text;  // tessera.conf lines
  std::vector<Expect> expects;
  // --- fair share (scenario_fairshare.cc) ---
  bool fairshare_on = false;
  std::vector<ScenarioUsage> usage;
  int64_t usage_last_reset = -1;
};

Result<Scenario> ParseScenario(const std::string& path);
// Runs the scenario; returns one message per unmet expectation ("file:line: ...").
std::vector<std::string> RunScenario(const Scenario& s);

}  // namespace tessera::sched::testing
