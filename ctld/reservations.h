#pragma once
// The controller's advance reservations (issue 17 §1): the live list the scheduler's snapshot
// carries, its JSON rows in the state database (migration 8), and the create / update / delete
// operations scontrol's `reservation` commands map to.
//
// Contract:
//  - Every change is checked first (sched/reservation_request.h: unknown nodes, end before
//    start, overlaps, busy nodes, ...); a refused change writes nothing and changes nothing.
//  - An accepted change is durable (Store::CommitSync) before the in-memory list changes.
//  - Expire(now) deletes (durably) reservations whose last occurrence ended; repeating ones
//    (DAILY, WEEKLY, HOURLY) are rolled forward to their current occurrence instead.
// Core thread only.
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ctld/sched/reservation_request.h"
#include "ctld/sched/snapshot.h"
#include "ctld/state/store.h"

namespace tessera::ctld {

std::string EncodeReservation(const sched::ReservationSnap& r);
Result<sched::ReservationSnap> DecodeReservation(const std::string& json);

class ReservationTable {
 public:
  explicit ReservationTable(Store* store) : store_(store) {}

  // Loads the stored reservations (a row that does not decode is logged into `notes`, skipped).
  void Load(const Recovered& rec, std::vector<std::string>* notes);
  const std::vector<sched::ReservationSnap>& all() const { return list_; }
  const sched::ReservationSnap* Find(const std::string& name) const;

  // `cluster`: nodes, partitions and running jobs as the scheduler sees them now (its
  // reservations are replaced by this table's).
  Result<sched::ReservationSnap> Create(const sched::ResvKeyValues& kv,
                                        sched::ClusterSnapshot cluster, int64_t now);
  Result<sched::ReservationSnap> Update(const sched::ResvKeyValues& kv,
                                        sched::ClusterSnapshot cluster, int64_t now);
  // `busy`: a job running in it (Slurm refuses: "Reservation busy").
  Status Delete(const std::string& name, bool busy);
  // Drops ended reservations and rolls repeating ones forward; true when something changed.
  bool Expire(int64_t now);

 private:
  Status Put(const sched::ReservationSnap& r);
  Store* store_;
  std::vector<sched::ReservationSnap> list_;  // by name
};

}  // namespace tessera::ctld
