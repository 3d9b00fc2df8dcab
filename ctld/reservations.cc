#include "ctld/reservations.h"

#include <boost/json.hpp>

#include <algorithm>

#include "ctld/sched/reservation.h"

namespace tessera::ctld {
namespace json = boost::json;
namespace {

json::array Strings(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

std::vector<std::string> Strings(const json::object& o, const char* key) {
  std::vector<std::string> out;
  if (const json::value* v = o.if_contains(key))
    for (const auto& s : v->as_array()) out.emplace_back(s.as_string());
  return out;
}

}  // namespace

std::string EncodeReservation(const sched::ReservationSnap& r) {
  json::object o{{"name", r.name},
                 {"start", r.start},
                 {"end", r.end},
                 {"nodes", Strings(r.nodes)},
                 {"users", Strings(r.users)},
                 {"accounts", Strings(r.accounts)},
                 {"flags", r.flags},
                 {"partition", r.partition}};
  return json::serialize(o);
}

Result<sched::ReservationSnap> DecodeReservation(const std::string& text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return InvalidArgument("reservation record is not a JSON object");
  try {
    const json::object& o = v.as_object();
    sched::ReservationSnap r;
    r.name = std::string(o.at("name").as_string());
    r.start = o.at("start").to_number<int64_t>();
    r.end = o.at("end").to_number<int64_t>();
    r.nodes = Strings(o, "nodes");
    r.users = Strings(o, "users");
    r.accounts = Strings(o, "accounts");
    r.flags = o.at("flags").to_number<uint32_t>();
    if (const json::value* p = o.if_contains("partition")) r.partition = std::string(p->as_string());
    return r;
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("reservation record: ") + e.what());
  }
}

void ReservationTable::Load(const Recovered& rec, std::vector<std::string>* notes) {
  list_.clear();
  for (const auto& [name, record] : rec.reservations) {
    auto r = DecodeReservation(record);
    if (!r.ok()) {
      notes->push_back("reservation " + name + " skipped: " + r.status().message());
      continue;
    }
    list_.push_back(std::move(*r));
  }
}

const sched::ReservationSnap* ReservationTable::Find(const std::string& name) const {
  for (const auto& r : list_)
    if (r.name == name) return &r;
  return nullptr;
}

Status ReservationTable::Put(const sched::ReservationSnap& r) {
  Batch b;
  b.PutReservation(r.name, EncodeReservation(r));
  TESSERA_RETURN_IF_ERROR(store_->CommitSync(std::move(b)));
  auto it = std::find_if(list_.begin(), list_.end(),
                         [&](const sched::ReservationSnap& x) { return x.name == r.name; });
  if (it != list_.end()) *it = r;
  else list_.insert(std::upper_bound(list_.begin(), list_.end(), r,
                                     [](const auto& a, const auto& b) { return a.name < b.name; }),
                    r);
  return Status::Ok();
}

Result<sched::ReservationSnap> ReservationTable::Create(const sched::ResvKeyValues& kv,
                                                        sched::ClusterSnapshot cluster, int64_t now) {
  auto q = sched::ParseResvRequest(kv);
  if (!q.ok()) return q.status();
  cluster.reservations = list_;
  auto r = sched::ApplyResvRequest(*q, nullptr, cluster, now);
  if (!r.ok()) return r.status();
  TESSERA_RETURN_IF_ERROR(Put(*r));
  return r;
}

Result<sched::ReservationSnap> ReservationTable::Update(const sched::ResvKeyValues& kv,
                                                        sched::ClusterSnapshot cluster, int64_t now) {
  auto q = sched::ParseResvRequest(kv);
  if (!q.ok()) return q.status();
  if (q->name.empty()) return InvalidArgument("ReservationName must be given");
  const sched::ReservationSnap* old = Find(q->name);
  if (!old) return NotFound("Reservation " + q->name + " not found");
  cluster.reservations = list_;
  auto r = sched::ApplyResvRequest(*q, old, cluster, now);
  if (!r.ok()) return r.status();
  TESSERA_RETURN_IF_ERROR(Put(*r));
  return r;
}

Status ReservationTable::Delete(const std::string& name, bool busy) {
  if (!Find(name)) return NotFound("Reservation " + name + " not found");
  if (busy) return FailedPrecondition("Reservation busy: jobs are running in reservation " + name);
  Batch b;
  b.DeleteReservation(name);
  TESSERA_RETURN_IF_ERROR(store_->CommitSync(std::move(b)));
  list_.erase(std::find_if(list_.begin(), list_.end(),
                           [&](const sched::ReservationSnap& x) { return x.name == name; }));
  return Status::Ok();
}

bool ReservationTable::Expire(int64_t now) {
  Batch b;
  std::vector<sched::ReservationSnap> next;
  for (const auto& r : list_) {
    if (r.end > now) {
      next.push_back(r);
      continue;
    }
    if (sched::ResvPeriod(r) == 0) {
      b.DeleteReservation(r.name);
      continue;
    }
    sched::ReservationSnap rolled = r;
    sched::ResvOccurrence(r, now, &rolled.start, &rolled.end);
    b.PutReservation(rolled.name, EncodeReservation(rolled));
    next.push_back(std::move(rolled));
  }
  if (b.empty()) return false;
  if (!store_->CommitSync(std::move(b)).ok()) return false;  // kept; retried next tick
  list_ = std::move(next);
  return true;
}

}  // namespace tessera::ctld
