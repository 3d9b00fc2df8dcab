#pragma once
// A victim policy turns the preempt action's machinery (actions/preempt.cc: whole jobs as
// victims, fewest and cheapest, no eviction that would not make room, in-flight victims first,
// PreemptMode and GraceTime per victim, PreemptExemptTime) into another action that chooses
// preemptors and victims by other rules: `reclaim` (issue 16 §2, actions/reclaim.cc) by
// accounts' deserved shares instead of QoS or partition tiers.
#include <memory>
#include <string>
#include <vector>

#include "ctld/sched/sched_config.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sched {

class Session;
struct JobInfo;

class VictimPolicy {
 public:
  virtual ~VictimPolicy() = default;
  virtual std::string ActionName() const = 0;  // also Preemption::cause
  virtual void Begin(Session& s) = 0;          // once per cycle, when the action runs
  // Whether a blocked eligible job may look for victims under this policy, judged as of Begin
  // (the action asks lazily, after earlier jobs were served; the answer must not change).
  virtual bool Wants(const JobInfo& j) = 0;
  // One search for `j`: Admit is then asked for each candidate (any running job it could
  // preempt: mode not OFF, past exempt time, preemptable, not taken, on its partition), cheapest
  // first; an admitted candidate may be chosen. Admission may depend on those admitted before.
  virtual void StartSearch(const JobInfo& j) = 0;
  virtual bool Admit(const RunningSnap& r) = 0;
  // `j` is served: `victims` (new ones) are chosen for it.
  virtual void Chosen(const JobInfo& j, const std::vector<const RunningSnap*>& victims) = 0;
};

std::unique_ptr<VictimPolicy> MakeReclaimPolicy(const SchedConfig& c);  // actions/reclaim.cc

}  // namespace tessera::sched
