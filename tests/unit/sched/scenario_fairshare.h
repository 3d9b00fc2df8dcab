#pragma once
// Fair-share keys of the scenario format (scenario_fairshare.cc; tests/scenarios/README.md).
#include <string>
#include <vector>

#include "common/status.h"
#include "ctld/sched/sched_config.h"

namespace tessera::sched::testing {

struct Scenario;
struct Expect;

// true: the line was a fair-share line (usage, charge, usage_reset) and is recorded in `sc`.
Result<bool> FairshareScenarioLine(const std::vector<std::string>& w, Scenario& sc);
// Fills the pending jobs' fair-share factors from the scenario's usage (no-op without any).
void ApplyScenarioFairshare(Scenario& sc, const SchedConfig& cfg);
// "" when `e` (kind "fairshare") holds; "?" when `e` is not a fair-share expectation.
std::string CheckFairshareExpect(const Scenario& sc, const Expect& e);

}  // namespace tessera::sched::testing
