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
  // --- topology (issue 15; scenario_topology.cc) ---
  std::string topology_plugin;              // "topology tree|block"
  std::string topology_text;                // the topology.conf lines
  std::string topology_error;               // the parser's error (when the scenario expects one)
  std::vector<std::string> topology_warnings;
  // --- fair share (scenario_fairshare.cc) ---
  bool fairshare_on = false;
  std::vector<ScenarioUsage> usage;
  int64_t usage_last_reset = -1;
  // --- queues (issue 16 §2; scenario_queues.cc): "cycles N [step=S]" ---
  int queue_cycles = 0;
  int64_t queue_step = 60;
  // --- reservations (issue 17 §1; scenario_resv.cc) ---
  std::vector<std::pair<int, std::string>> resv_lines;  // (line, "create|update|delete ...")
  std::vector<std::string> resv_errors;                 // "line N: message" of refused lines
};

Result<Scenario> ParseScenario(const std::string& path);

// --- topology (issue 15; scenario_topology.cc, format in tests/scenarios/README.md) ---
// "topology tree|block" picks the plugin; "topology <line>" adds a topology.conf line.
Status ScenarioTopologyLine(Scenario& sc, const std::string& rest, const std::string& where);
// Partition key topology=required|preferred; job keys switches=N[@T], segment=N. Returns false
// when `key` is none of them; `err` gets a message for a bad value.
bool ScenarioTopologyPartitionKey(const std::string& key, const std::string& v, PartitionSnap& p,
                                  std::string* err);
bool ScenarioTopologyJobKey(const std::string& key, const std::string& v, JobSnap& j,
                            std::string* err);
// After the last line: parses the topology with ParseTopologyConfig (nodes = the scenario's)
// and sets snap.topology. A parse error is kept in topology_error when the scenario expects one
// ("expect topology_error"), else returned.
Status FinishScenarioTopology(Scenario& sc);
// Whether `kind` is an expectation without a job id (topology_error, topology_warning).
bool TopologyExpectHasNoJob(const std::string& kind);
// Checks "expect leaves ID N" (leaves/blocks of the start or reservation), topology_error TEXT,
// topology_warning TEXT. Returns false when `e` is not one of them; `why` = "" when met.
bool CheckTopologyExpect(const Scenario& s, const Expect& e, const CycleResult& r,
                         std::string* why);
// Runs the scenario; returns one message per unmet expectation ("file:line: ...").
std::vector<std::string> RunScenario(const Scenario& s);
// --- reservations (issue 17 §1; scenario_resv.cc) ---
// After the last line: applies the "resv create|update|delete" lines in order through
// ParseResvRequest / ApplyResvRequest; a refused line's error is kept in resv_errors.
Status FinishScenarioResv(Scenario& sc);
// Whether `kind` is a reservation expectation without a job id (resv, resv_error).
bool ResvExpectHasNoJob(const std::string& kind);
// Checks "expect resv NAME key=value..." and "expect resv_error TEXT"; false when `e` is
// neither. `why` = "" when met.
bool CheckResvExpect(const Scenario& s, const Expect& e, std::string* why);
// Refused resv lines that no "expect resv_error" names (each one a failure).
std::vector<std::string> UnexpectedResvErrors(const Scenario& s);
// acct helper: "expect assoc ID key=value..." (scenario_assoc.cc); "" = met.
std::string CheckAssocExpect(const Expect& e, const JobSnap& job, const SchedConfig& cfg);

}  // namespace tessera::sched::testing
