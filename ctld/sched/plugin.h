#pragma once
// The two extension points of a scheduling session (the shape of KAI Scheduler / Volcano).
//  - A Plugin registers callbacks on the Session when it opens (job order, predicates, node
//    scores, eligibility votes, gang readiness, victim selection, ...).
//  - An Action is one step of the cycle (enqueue, allocate, backfill, preempt, reclaim, ...),
//    run in the order of SchedulerActions=.
// Both are created fresh per cycle by the Registry, so they may keep per-cycle state.
#include <string>

namespace tessera::sched {

class Session;

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string Name() const = 0;
  virtual void OnSessionOpen(Session& s) = 0;
  virtual void OnSessionClose(Session& s) {}
};

class Action {
 public:
  virtual ~Action() = default;
  virtual std::string Name() const = 0;
  virtual void Execute(Session& s) = 0;
};

}  // namespace tessera::sched
