#pragma once
// Preemption in tessera-sim (issue 16 §4). The victims are chosen by the same preempt action as
// in ctld (ctld/sched/actions/preempt.cc; it runs when the config sets PreemptType, which adds
// it to the actions); the sim applies CycleResult::preemptions in virtual time, as ctld does
// (ctld/preemption.h):
//  - CANCEL / REQUEUE: the victim ends at now + its GraceTime (it holds its resources until
//    then and is not chosen again: RunningSnap::preempted_for); a CANCEL victim is over
//    (SimJob::preempted), a REQUEUE victim pends again and later runs its whole runtime anew
//    (SimJob::requeues). A victim whose own end comes first simply completes.
//  - SUSPEND: the victim stops now; its allocation stays held for it, except what the preemptor
//    uses once started; when the preemptor is over (ended, requeued, cancelled) the victim
//    resumes on its own place, its end pushed by the suspended time (SimJob::suspended_s).
//  - The preemptor leaves the queue with its planned place and starts there once its last
//    CANCEL/REQUEUE victim has ended (at once for SUSPEND victims and GraceTime 0); if the
//    place is no longer free then, it pends again.
// SimRun::preemptions counts victims per mode. Jobs are run.jobs[id - 1] (engine.cc's ids).
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ctld/sched/decision.h"
#include "ctld/sched/snapshot.h"
#include "sim/engine.h"

namespace tessera::sim {

class SimPreempt {
 public:
  // What the engine lends: resources of the live nodes and a job's running entry.
  struct LiveOps {
    std::function<void(const std::vector<sched::NodePlacement>&, bool take)> take;
    std::function<bool(const std::vector<sched::NodePlacement>&)> fits;
    std::function<std::vector<sched::NodePlacement>(uint64_t id)> placement;
    std::function<void(size_t job)> leave;              // stops holding its allocation
    std::function<void(size_t job, int64_t end)> resume;  // holds it again, runs until `end`
  };
  using StartFn = std::function<void(size_t job, const std::vector<sched::NodePlacement>&, int64_t now)>;

  explicit SimPreempt(SimRun& run) : run_(run) {}
  // Applies one cycle's preemptions at `now`; `end_at(job, t)` schedules a victim's end.
  void Apply(const std::vector<sched::Preemption>& ps, int64_t now,
             const std::function<void(size_t, int64_t)>& end_at, const LiveOps& ops,
             const StartFn& start, std::vector<size_t>& pending);
  // A running job `j` (index `i`) ended now; true = it is a REQUEUE victim to pend again.
  bool Ended(SimJob& j, size_t i);
  // After an instant's ends: preemptors whose victims are gone start, suspended victims whose
  // preemptor is over resume.
  void AfterEnds(int64_t now, const StartFn& start, const LiveOps& ops, std::vector<size_t>& pending);
  // Ending victims are not preemptable again (as ctld's AdjustPreemptSnapshot).
  void AdjustSnapshot(sched::ClusterSnapshot& snap) const;

 private:
  struct Victim {
    uint64_t preemptor = 0;
    std::string mode;
    int64_t since = 0;    // SUSPEND: suspended since
    int64_t kill_at = 0;  // CANCEL/REQUEUE: the end of its grace time
    std::vector<sched::NodePlacement> held;  // SUSPEND: what is held for it now
  };
  bool Active(uint64_t id, int64_t now) const;
  void Started(uint64_t preemptor, const std::vector<sched::NodePlacement>& at, const LiveOps& ops);

  SimRun& run_;
  std::map<uint64_t, Victim> victims_;
  std::map<uint64_t, std::vector<sched::NodePlacement>> plans_;  // preemptor -> its place
};

}  // namespace tessera::sim
