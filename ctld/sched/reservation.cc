#include "ctld/sched/reservation.h"

#include <algorithm>

namespace tessera::sched {

int64_t ResvPeriod(const ReservationSnap& r) {
  if (r.flags & kResvWeekly) return 7 * 86400;
  if (r.flags & kResvDaily) return 86400;
  if (r.flags & kResvHourly) return 3600;
  return 0;
}

void ResvOccurrence(const ReservationSnap& r, int64_t t, int64_t* start, int64_t* end) {
  int64_t p = ResvPeriod(r);
  int64_t k = (p == 0 || t < r.end) ? 0 : (t - r.end) / p + 1;
  *start = r.start + k * p;
  *end = r.end + k * p;
}

bool ResvOverlaps(const ReservationSnap& r, int64_t a, int64_t b) {
  if (b <= r.start || b <= a) return false;
  int64_t s = 0, e = 0;
  ResvOccurrence(r, a, &s, &e);
  return e > a && s < b;
}

bool ResvActiveAt(const ReservationSnap& r, int64_t t) {
  int64_t s = 0, e = 0;
  ResvOccurrence(r, t, &s, &e);
  return s <= t && t < e;
}

bool ResvAccess(const ReservationSnap& r, const std::string& user, const std::string& account) {
  if (std::find(r.users.begin(), r.users.end(), user) != r.users.end()) return true;
  return !account.empty() &&
         std::find(r.accounts.begin(), r.accounts.end(), account) != r.accounts.end();
}

std::string ResvFlagsText(uint32_t flags) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {kResvMaint, "MAINT"}, {kResvIgnoreJobs, "IGNORE_JOBS"}, {kResvOverlap, "OVERLAP"},
      {kResvFlex, "FLEX"},   {kResvHourly, "HOURLY"},          {kResvDaily, "DAILY"},
      {kResvWeekly, "WEEKLY"}};
  std::string out;
  for (const auto& [bit, name] : kNames)
    if (flags & bit) out += (out.empty() ? "" : ",") + std::string(name);
  return out;
}

ResvView::ResvView(const ClusterSnapshot& snap) {
  if (snap.reservations.empty()) return;
  std::unordered_map<std::string, uint32_t> node_index;
  for (uint32_t i = 0; i < snap.nodes.size(); ++i) node_index[snap.nodes[i].name] = i;
  node_resv_.resize(snap.nodes.size());
  for (const auto& r : snap.reservations) {
    int idx = static_cast<int>(resv_.size());
    resv_.push_back(&r);
    by_name_[r.name] = idx;
    in_resv_.emplace_back(snap.nodes.size(), 0);
    for (const auto& n : r.nodes) {
      auto it = node_index.find(n);
      if (it == node_index.end()) continue;
      in_resv_.back()[it->second] = 1;
      node_resv_[it->second].push_back(static_cast<uint32_t>(idx));
    }
  }
}

int ResvView::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

bool ResvView::Allows(int job_resv, uint32_t node, int64_t start, int64_t end) const {
  if (resv_.empty()) return true;
  if (job_resv >= 0 && !(at(job_resv).flags & kResvFlex) &&
      !in_resv_[static_cast<size_t>(job_resv)][node])
    return false;
  for (uint32_t r : node_resv_[node]) {
    if (static_cast<int>(r) == job_resv) continue;
    const ReservationSnap& rs = *resv_[r];
    if (ignore_maint && (rs.flags & kResvMaint)) continue;
    if (ResvOverlaps(rs, start, end)) return false;
  }
  return true;
}

bool ResvView::StartOk(int job_resv, int64_t start) const {
  if (job_resv < 0) return true;
  const ReservationSnap& r = at(job_resv);
  return (r.flags & kResvFlex) || ResvActiveAt(r, start);
}

std::vector<int64_t> ResvView::Boundaries(int64_t from, int64_t to) const {
  std::vector<int64_t> out;
  for (const ReservationSnap* r : resv_) {
    int64_t p = ResvPeriod(*r), s = 0, e = 0;
    ResvOccurrence(*r, from, &s, &e);
    for (int k = 0; k < 1000 && s <= to; ++k, s += p, e += p) {
      if (s >= from) out.push_back(s);
      if (e >= from && e <= to) out.push_back(e);
      if (p == 0) break;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool ResvView::MaintCrosses(int job_resv, int64_t start, int64_t end) const {
  for (size_t i = 0; i < resv_.size(); ++i)
    if (static_cast<int>(i) != job_resv && (resv_[i]->flags & kResvMaint) &&
        ResvOverlaps(*resv_[i], start, end))
      return true;
  return false;
}

}  // namespace tessera::sched
