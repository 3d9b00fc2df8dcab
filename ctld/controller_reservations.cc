// The controller's side of advance reservations (issue 17 §1): start-up load, scontrol's
// create / update / delete, expiry, and what the scheduler and submissions see.
#include "ctld/controller.h"
#include "ctld/log.h"
#include "ctld/sched/reservation.h"

namespace tessera::ctld {

void Controller::StartReservations(const Recovered& rec) {
  std::vector<std::string> notes;
  resv_->Load(rec, &notes);
  for (const auto& n : notes) Log("reservations: " + n);
  if (!resv_->all().empty())
    Log("reservations: " + std::to_string(resv_->all().size()) + " loaded");
}

sched::ClusterSnapshot Controller::ResvCluster(int64_t now) {
  return SchedBridge::Snapshot(*cfg_, jobs_.jobs(), jobs_.active(), nodes_, now,
                               [this](uint64_t id) { return jobs_.IsDurable(id); },
                               topology_->snap);
}

Result<sched::ReservationSnap> Controller::CreateReservation(const sched::ResvKeyValues& kv) {
  int64_t now = clock_->Now();
  auto r = resv_->Create(kv, ResvCluster(now), now);
  if (r.ok()) {
    Log("reservation " + r->name + " created");
    RequestSchedule();
  }
  return r;
}

Result<sched::ReservationSnap> Controller::UpdateReservation(const sched::ResvKeyValues& kv) {
  int64_t now = clock_->Now();
  auto r = resv_->Update(kv, ResvCluster(now), now);
  if (r.ok()) {
    Log("reservation " + r->name + " updated");
    RequestSchedule();
  }
  return r;
}

Status Controller::DeleteReservation(const std::string& name) {
  bool busy = false;
  for (const JobRecord* j : jobs_.active()) {
    JobState s = j->State();
    busy |= !IsFinished(s) && s != JobState::kPending && j->spec.reservation == name;
  }
  Status st = resv_->Delete(name, busy);
  if (st.ok()) {
    Log("reservation " + name + " deleted");
    RequestSchedule();
  }
  return st;
}

const std::vector<sched::ReservationSnap>& Controller::Reservations() const { return resv_->all(); }

void Controller::ExpireReservations() {
  if (resv_ && resv_->Expire(clock_->Now())) RequestSchedule();
}

}  // namespace tessera::ctld
