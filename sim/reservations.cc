#include "sim/reservations.h"

#include <sstream>

#include "ctld/sched/reservation.h"
#include "ctld/sched/reservation_request.h"

namespace tessera::sim {

Status LoadReservations(const std::string& text, const std::string& file, int64_t t0,
                        sched::ClusterSnapshot* cluster) {
  sched::ClusterSnapshot next = *cluster;  // all lines or none
  std::istringstream in(text);
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    sched::ResvKeyValues kv;
    std::string where = file + ":" + std::to_string(no) + ": ";
    for (std::string w; words >> w;) {
      size_t eq = w.find('=');
      if (eq == std::string::npos || eq == 0)
        return InvalidArgument(where + "expected KEY=VALUE, got \"" + w + "\"");
      std::string key = w.substr(0, eq), value = w.substr(eq + 1);
      std::string lower = key;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if ((lower == "starttime" || lower == "endtime") && !value.empty() && value[0] == '+') {
        try {
          value = std::to_string(t0 + std::stoll(value.substr(1)));
        } catch (const std::exception&) {
          return InvalidArgument(where + "invalid " + key + " \"" + value + "\"");
        }
      }
      kv.emplace_back(key, value);
    }
    if (kv.empty()) continue;
    auto q = sched::ParseResvRequest(kv);
    if (!q.ok()) return InvalidArgument(where + q.status().message());
    auto r = sched::ApplyResvRequest(*q, nullptr, next, t0);
    if (!r.ok()) return InvalidArgument(where + r.status().message());
    next.reservations.push_back(std::move(*r));
  }
  cluster->reservations = std::move(next.reservations);
  return Status::Ok();
}

int64_t NextReservationBoundary(const sched::ClusterSnapshot& cluster, int64_t t) {
  int64_t best = sched::kNever;
  for (const auto& r : cluster.reservations) {
    int64_t s = 0, e = 0;
    sched::ResvOccurrence(r, t, &s, &e);  // the occurrence ending after t
    if (s > t) best = std::min(best, s);
    else if (e > t) best = std::min(best, e);
  }
  return best;
}

}  // namespace tessera::sim
