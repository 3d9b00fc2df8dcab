#pragma once
// Queue keys of the scenario format (issue 16 §2; tests/scenarios/README.md, "Queues"):
//   cycles N [step=SECONDS]        run N more cycles after the first, applying each result
//   expect queue ACCOUNT deserved_gpus=N allocated_gpus=N pending_gpus=N deserved_cpus=N ...
//   expect reclaim ID [victims=A,B] [modes=...]     a preemption the reclaim action chose
//   expect evictions ACCOUNT N     victims from ACCOUNT over all cycles (first included)
//   expect final_gpus ACCOUNT N    GPUs the running jobs of ACCOUNT (and its children) hold at the end
//   expect final_running ID / expect final_pending ID
#include <string>
#include <vector>

#include "ctld/sched/scheduler.h"

namespace tessera::sched::testing {

struct Scenario;
struct Expect;

// true: the line was a queue line (cycles) and is recorded in `sc`.
Result<bool> QueueScenarioLine(const std::vector<std::string>& w, Scenario& sc);
// Whether `kind` names an account (or nothing) instead of a job id.
bool QueueExpectHasNoJob(const std::string& kind);
// "" when `e` holds; "?" when `e` is not a queue expectation. `first` = the first cycle.
std::string CheckQueueExpect(const Scenario& sc, const Expect& e, const CycleResult& first,
                             const SchedConfig& cfg);

}  // namespace tessera::sched::testing
