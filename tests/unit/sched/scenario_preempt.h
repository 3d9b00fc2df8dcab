#pragma once
// Scenario format keys of preemption (issue 16 §4; documented in tests/scenarios/README.md,
// "Preemption").
#include <string>

#include "ctld/sched/scheduler.h"
#include "tests/unit/sched/scenario.h"

namespace tessera::sched::testing {

// `running` keys priority=N start=EPOCH preempted_for=ID nopreempt units=n1:0+1 (GPU indices): sets them on
// `r` and returns true; false for other keys. *err is set on a bad value.
bool RunningPreemptKey(RunningSnap& r, const std::string& key, const std::string& value,
                       std::string* err);
// `expect preempt ID victims=A,B [modes=M,M] [grace=S,S] [pending_victims=C]` and
// `expect nopreempt ID`: "" when met, else why not; `handled` false for other kinds.
std::string CheckPreemptExpect(const Expect& e, const CycleResult& r, bool* handled);

}  // namespace tessera::sched::testing
