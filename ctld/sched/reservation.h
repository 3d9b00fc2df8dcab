#pragma once
// Advance reservations on the scheduler's timeline (issue 17 §1, Slurm's reservations).
//
// A ReservationSnap (snapshot.h) blocks its nodes over each occurrence [start + k*period,
// end + k*period) (period 0 = one occurrence). During a block:
//  - a job that does not name the reservation may not use those nodes: a placement at [s, e)
//    (s + time limit = e) on a node is refused when [s, e) overlaps a block of any reservation
//    holding that node. So backfill never starts a job whose limit crosses a reservation's start
//    on a node, and the earliest start of a reserved (top) job lands after the block.
//  - a job that names it may use only its nodes and must start inside an occurrence (reason
//    `Reservation` while it waits for one). It may run past the end (Slurm keeps such jobs).
//    Other reservations on the same nodes still block it.
//  - FLEX: a job that names the reservation may also start before it, run past it and use
//    nodes outside it (as any job); the reservation just does not block it.
// MAINT: a job that would fit now but for a MAINT block crossing its time limit waits with
// reason "ReqNodeNotAvail, Reserved for maintenance".
//
// ResvView is built once per session (pure: the snapshot's `now`, no clock).
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ctld/sched/snapshot.h"

namespace tessera::sched {

enum ResvFlag : uint32_t {
  kResvMaint = 1u << 0,
  kResvIgnoreJobs = 1u << 1,
  kResvFlex = 1u << 2,
  kResvDaily = 1u << 3,
  kResvWeekly = 1u << 4,
  kResvHourly = 1u << 5,
  kResvOverlap = 1u << 6,
};

// The repeat period of `r` in seconds (HOURLY 3600, DAILY 86400, WEEKLY 604800), 0 = none.
int64_t ResvPeriod(const ReservationSnap& r);
// The occurrence of `r` that ends after `t` (the active or the next one): [*start, *end).
void ResvOccurrence(const ReservationSnap& r, int64_t t, int64_t* start, int64_t* end);
// Whether some occurrence of `r` overlaps [a, b).
bool ResvOverlaps(const ReservationSnap& r, int64_t a, int64_t b);
// Whether `t` lies inside an occurrence of `r`.
bool ResvActiveAt(const ReservationSnap& r, int64_t t);
// Whether a job of `user` / `account` may use `r` (named in Users= or Accounts=).
bool ResvAccess(const ReservationSnap& r, const std::string& user, const std::string& account);
// Flags as Slurm prints them ("MAINT,IGNORE_JOBS"); "" = none.
std::string ResvFlagsText(uint32_t flags);

class ResvView {
 public:
  ResvView() = default;
  explicit ResvView(const ClusterSnapshot& snap);

  bool empty() const { return resv_.empty(); }
  // Index of the reservation called `name`, or -1.
  int Find(const std::string& name) const;
  const ReservationSnap& at(int i) const { return *resv_[static_cast<size_t>(i)]; }
  // Whether a job of reservation `job_resv` (-1 = none) may use node `node` (snapshot index)
  // over [start, end). With ignore_maint set, MAINT reservations do not block (a probe).
  bool Allows(int job_resv, uint32_t node, int64_t start, int64_t end) const;
  // Whether a job of `job_resv` may start at `start` at all (inside an occurrence, or FLEX).
  bool StartOk(int job_resv, int64_t start) const;
  // Times in [from, to] at which a block begins or ends: candidate start times for backfill's
  // earliest-start search (resources a job may use change there).
  std::vector<int64_t> Boundaries(int64_t from, int64_t to) const;
  // Whether a MAINT reservation that `job_resv` is not in blocks some node over [start, end).
  bool MaintCrosses(int job_resv, int64_t start, int64_t end) const;

  bool ignore_maint = false;

 private:
  std::vector<const ReservationSnap*> resv_;
  std::unordered_map<std::string, int> by_name_;
  std::vector<std::vector<uint32_t>> node_resv_;  // per snapshot node: reservations holding it
  std::vector<std::vector<uint8_t>> in_resv_;     // per reservation: node membership bitmap
};

}  // namespace tessera::sched
