#pragma once
// Preemption in ctld (issue 16 §4). The scheduler's preempt action chooses victims
// (sched::Preemption, ctld/sched/actions/preempt.cc); ctld applies them (Controller members in
// preemption.cc, state in PreemptState):
//  - Re-check: the preemptor still pending and not held, every new victim still RUNNING and
//    not already being cancelled, requeued or preempted; else nothing of that preemption is done.
//  - Durable first: one transaction with a `preempted` event {by, mode, grace_time} per victim
//    (+ requeue_requested for REQUEUE, + suspended for SUSPEND) and a `preempting` event
//    {victims, mode} on the preemptor (`tcontrol show job ID --events`).
//  - CANCEL / REQUEUE: with GraceTime > 0 the job gets SIGTERM now (forwarded to its processes)
//    and the cancel (SIGTERM, KillWait, SIGKILL) GraceTime later; without, the cancel at once.
//    A CANCEL victim ends PREEMPTED (tacct shows it); a REQUEUE victim goes back PENDING with
//    the same id, requeue_count + 1 (SLURM_RESTART_COUNT in its next run), reason "Preempted".
//  - SUSPEND: the victim is frozen on its node (stepd: the cgroup freezer, v1 freezer.state or
//    v2 cgroup.freeze; SIGSTOP without a freezer), state SUSPENDED; its allocation is lent: it
//    leaves the node tables, and each snapshot holds whatever of it the preemptor does not use
//    (HoldSuspended), so only the preemptor can run there. When the preemptor is over (ended,
//    requeued, or never started), the victim takes its resources back and is thawed (resumed
//    event); if they are not free yet it is retried every second.
//  - The preemptor starts on its planned placement as soon as its last victim's resources are
//    released (in the same core-thread task, so no cycle can give them to another job); if it
//    no longer fits there it is left to the scheduler.
// After a ctld restart (RecoverPreemptions, from each job's last `preempted` event since its
// last start/resume): a preempt-suspended job is lent and held again and resumed when its
// preemptor is over; a CANCEL or REQUEUE victim still running is cancelled at the end of its
// grace time (JobRecord::preempt_kill_at, the durable deadline; at once if that has passed).
// Lost: the preemptor's planned place (it is scheduled as any pending job;
// its REQUEUE victims are `preempted_for` it, so their resources are held for it).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ctld/jobs/job.h"
#include "ctld/sched/decision.h"
#include "ctld/sched/snapshot.h"

namespace tessera::ctld {

struct PreemptState {
  struct Victim {
    uint64_t preemptor = 0;
    std::string mode;        // "CANCEL", "REQUEUE", "SUSPEND"
    int64_t grace_time = 0;
    int64_t kill_at = 0;     // CANCEL/REQUEUE in grace time: when the cancel is sent; 0 = sent
  };
  std::map<uint64_t, Victim> victims;  // ending (CANCEL/REQUEUE) or suspended (SUSPEND) jobs
  struct Plan {
    std::vector<sched::NodePlacement> placement;
  };
  std::map<uint64_t, Plan> plans;      // preemptor -> its place once its victims are gone
};

// Event details.
// `cause` (issue 16 §2): "reclaim" adds "cause":"reclaim"; "" = a preempt-action preemption.
std::string PreemptedDetail(uint64_t by, const std::string& mode, int64_t grace_time,
                            const std::string& cause = "");
std::string PreemptingDetail(const std::vector<sched::PreemptVictim>& victims,
                             const std::string& cause = "");

// Marks a suspended victim's resources that its (running) preemptor `by` does not hold as taken
// in `snap` (node free counts and GPU units) and makes the victim's running entry hold exactly
// those (its timeline release), not preemptable. `by` may be null (not running). Pure.
void HoldSuspended(sched::ClusterSnapshot& snap, const JobRecord& victim, const JobRecord* by);

// A job's allocation as scheduler placements (for StillFits).
std::vector<sched::NodePlacement> PlacementOf(const JobRecord& j);

}  // namespace tessera::ctld
