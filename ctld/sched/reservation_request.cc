#include "ctld/sched/reservation_request.h"

#include <algorithm>
#include <cctype>

#include "common/duration.h"
#include "common/hostlist.h"
#include "ctld/sched/reservation.h"

namespace tessera::sched {
namespace {

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> SplitComma(const std::string& v) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : v + ",") {
    if (c != ',') { cur += c; continue; }
    if (!cur.empty()) out.push_back(cur);
    cur.clear();
  }
  return out;
}

struct FlagName { const char* name; uint32_t bit; };
constexpr FlagName kFlags[] = {{"MAINT", kResvMaint},   {"IGNORE_JOBS", kResvIgnoreJobs},
                               {"FLEX", kResvFlex},     {"DAILY", kResvDaily},
                               {"WEEKLY", kResvWeekly}, {"HOURLY", kResvHourly},
                               {"OVERLAP", kResvOverlap}};

Result<uint32_t> FlagBit(const std::string& name) {
  std::string up = name;
  for (auto& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& f : kFlags)
    if (up == f.name) return f.bit;
  return InvalidArgument("invalid reservation flag \"" + name +
                         "\" (known: MAINT, IGNORE_JOBS, FLEX, DAILY, WEEKLY, HOURLY, OVERLAP)");
}

// "+x" / "-x" items (or mode '+' / '-' from "Key+=" / "Key-=") add or remove; plain ones set.
void ParseList(const std::string& v, char mode, ResvListEdit* e) {
  e->given = true;
  for (const auto& item : SplitComma(v)) {
    char m = mode;
    std::string name = item;
    if (item[0] == '+' || item[0] == '-') m = item[0], name = item.substr(1);
    if (name.empty()) continue;
    (m == '+' ? e->add : m == '-' ? e->remove : e->set).push_back(name);
  }
}

Result<int64_t> Epoch(const std::string& key, const std::string& v) {
  auto n = ParseUint(v, key);
  if (!n.ok()) return InvalidArgument("invalid " + key + " \"" + v + "\": expected a time");
  return static_cast<int64_t>(*n);
}

}  // namespace

Result<ResvRequest> ParseResvRequest(const ResvKeyValues& kv) {
  ResvRequest r;
  for (const auto& [raw_key, v] : kv) {
    std::string key = Lower(raw_key);
    char mode = 0;
    if (!key.empty() && (key.back() == '+' || key.back() == '-')) mode = key.back(), key.pop_back();
    if (mode && key != "users" && key != "accounts" && key != "flags")
      return InvalidArgument("\"" + raw_key + "=\" adds or removes only Users, Accounts and Flags");
    if (key == "reservationname" || key == "reservation") r.name = v;
    else if (key == "starttime") { auto t = Epoch("StartTime", v); if (!t.ok()) return t.status(); r.start = *t; }
    else if (key == "endtime") { auto t = Epoch("EndTime", v); if (!t.ok()) return t.status(); r.end = *t; }
    else if (key == "duration") {
      auto d = ParseTimeLimit(v);
      if (!d.ok()) return InvalidArgument("invalid Duration \"" + v + "\": " + d.status().message());
      r.duration = *d == kUnlimited ? int64_t{365} * 86400 : *d;
      if (*r.duration <= 0) return InvalidArgument("invalid Duration \"" + v + "\": must be positive");
    } else if (key == "nodes") r.nodes = v;
    else if (key == "nodecnt" || key == "nodecount") {
      auto n = ParseUint(v, "NodeCnt");
      if (!n.ok() || *n == 0 || *n > 1000000) return InvalidArgument("invalid NodeCnt \"" + v + "\"");
      r.node_cnt = static_cast<uint32_t>(*n);
    } else if (key == "partitionname" || key == "partition") r.partition = v;
    else if (key == "users" || key == "user") ParseList(v, mode, &r.users);
    else if (key == "accounts" || key == "account") ParseList(v, mode, &r.accounts);
    else if (key == "flags") {
      r.flags_given = true;
      for (const auto& item : SplitComma(v)) {
        char m = mode;
        std::string name = item;
        if (item[0] == '+' || item[0] == '-') m = item[0], name = item.substr(1);
        auto bit = FlagBit(name);
        if (!bit.ok()) return bit.status();
        (m == '-' ? r.flags_remove : m == '+' ? r.flags_add : r.flags_set) |= *bit;
      }
    } else {
      return InvalidArgument("unknown reservation key \"" + raw_key +
                             "\" (known: ReservationName, StartTime, EndTime, Duration, Nodes, "
                             "NodeCnt, PartitionName, Users, Accounts, Flags)");
    }
  }
  return r;
}

namespace {

bool Shares(const ReservationSnap& a, const ReservationSnap& b, std::string* node) {
  for (const auto& n : a.nodes)
    if (std::find(b.nodes.begin(), b.nodes.end(), n) != b.nodes.end()) return *node = n, true;
  return false;
}

// Whether some occurrence of `a` overlaps some occurrence of `b`.
bool WindowsMeet(const ReservationSnap& a, const ReservationSnap& b) {
  int64_t pa = ResvPeriod(a), pb = ResvPeriod(b);
  int64_t limit = pb == 0 ? b.end : a.start + 14 * 86400;
  int64_t s = a.start, e = a.end;
  for (int k = 0; k < 4000 && s < limit; ++k, s += pa, e += pa) {
    if (ResvOverlaps(b, s, e)) return true;
    if (pa == 0) break;
  }
  return false;
}

bool ShareAllowed(const ReservationSnap& a, const ReservationSnap& b) {
  return ((a.flags | b.flags) & (kResvMaint | kResvOverlap)) != 0;
}

// Why `node` cannot be in `r` ("" = it can): another reservation or a running job.
std::string NodeConflict(const ReservationSnap& r, const std::string& node,
                         const ClusterSnapshot& c, int64_t now) {
  ReservationSnap one = r;
  one.nodes = {node};
  for (const auto& o : c.reservations) {
    std::string shared;
    if (o.name == r.name || ShareAllowed(r, o) || !Shares(one, o, &shared)) continue;
    if (WindowsMeet(r, o))
      return "reservation " + o.name + " holds node " + node +
             " at an overlapping time (Flags=OVERLAP or MAINT allow it)";
  }
  if (r.flags & kResvIgnoreJobs) return "";
  int64_t s = 0, e = 0;
  ResvOccurrence(r, now, &s, &e);
  for (const auto& run : c.running) {
    if (run.end_time <= s) continue;
    for (const auto& u : run.nodes)
      if (u.node == node)
        return "job " + std::to_string(run.id) + " runs on node " + node +
               " past the reservation's start (Flags=IGNORE_JOBS allows it)";
  }
  return "";
}

Status ApplyList(const ResvListEdit& e, bool create, const std::string& key,
                 std::vector<std::string>* out) {
  if (!e.given) return Status::Ok();
  if (create && !e.remove.empty())
    return InvalidArgument(key + "=-NAME removes a name on update only");
  if (!e.set.empty()) *out = e.set;
  for (const auto& a : e.add)
    if (std::find(out->begin(), out->end(), a) == out->end()) out->push_back(a);
  for (const auto& x : e.remove) {
    auto it = std::find(out->begin(), out->end(), x);
    if (it == out->end()) return InvalidArgument(key + ": " + x + " is not in the reservation");
    out->erase(it);
  }
  return Status::Ok();
}

Status ApplyTimes(const ResvRequest& q, bool create, int64_t now, ReservationSnap* r) {
  if (q.end && q.duration) return InvalidArgument("give EndTime or Duration, not both");
  int64_t old_len = r->end - r->start;
  if (q.start) {
    if (create && *q.start < now - 60)
      return InvalidArgument("StartTime " + FormatTimestamp(*q.start) + " is in the past");
    r->start = *q.start;
    if (!create) r->end = r->start + old_len;
  } else if (create) {
    r->start = now;
  }
  if (q.end) r->end = *q.end;
  if (q.duration) r->end = r->start + *q.duration;
  if (create && !q.end && !q.duration) return InvalidArgument("EndTime or Duration must be given");
  if (r->end <= r->start)
    return InvalidArgument("EndTime " + FormatTimestamp(r->end) + " is not after StartTime " +
                           FormatTimestamp(r->start));
  return Status::Ok();
}

Status ApplyFlags(const ResvRequest& q, bool create, ReservationSnap* r) {
  if (create && q.flags_remove) return InvalidArgument("Flags=-FLAG clears a flag on update only");
  if (create) r->flags = 0;
  r->flags = (r->flags | q.flags_set | q.flags_add) & ~q.flags_remove;
  uint32_t rep = r->flags & (kResvHourly | kResvDaily | kResvWeekly);
  if (rep & (rep - 1)) return InvalidArgument("only one of HOURLY, DAILY and WEEKLY may be set");
  int64_t p = ResvPeriod(*r);
  if (p && r->end - r->start > p)
    return InvalidArgument("Duration " + FormatDuration(r->end - r->start) + " is longer than the " +
                           ResvFlagsText(rep) + " period");
  return Status::Ok();
}

Status PickNodes(const ResvRequest& q, const ClusterSnapshot& c, int64_t now, ReservationSnap* r) {
  auto in_part = [&](const NodeSnap& n) {
    return r->partition.empty() ||
           std::find(n.partitions.begin(), n.partitions.end(), r->partition) != n.partitions.end();
  };
  if (q.nodes) {
    r->nodes.clear();
    if (Lower(*q.nodes) == "all") {
      for (const auto& n : c.nodes)
        if (in_part(n)) r->nodes.push_back(n.name);
      return Status::Ok();
    }
    auto names = ExpandHostlist(*q.nodes);
    if (!names.ok()) return InvalidArgument("invalid Nodes \"" + *q.nodes + "\": " + names.status().message());
    for (const auto& n : *names) {
      if (std::none_of(c.nodes.begin(), c.nodes.end(), [&](const NodeSnap& s) { return s.name == n; }))
        return InvalidArgument("invalid node name specified: " + n);
      if (std::find(r->nodes.begin(), r->nodes.end(), n) == r->nodes.end()) r->nodes.push_back(n);
    }
    return Status::Ok();
  }
  if (!q.node_cnt) return Status::Ok();
  r->nodes.clear();
  uint32_t free = 0;
  for (int pass = 0; pass < 2 && r->nodes.size() < *q.node_cnt; ++pass)  // usable nodes first
    for (const auto& n : c.nodes) {
      if (r->nodes.size() >= *q.node_cnt) break;
      if (!in_part(n) || n.schedulable != (pass == 0)) continue;
      if (!NodeConflict(*r, n.name, c, now).empty()) continue;
      r->nodes.push_back(n.name);
      ++free;
    }
  if (free < *q.node_cnt)
    return FailedPrecondition("Requested nodes are busy: NodeCnt=" + std::to_string(*q.node_cnt) +
                              " but only " + std::to_string(free) + " nodes" +
                              (r->partition.empty() ? "" : " of partition " + r->partition) +
                              " are free over the reservation's time");
  return Status::Ok();
}

std::string NewName(const ReservationSnap& r, const ClusterSnapshot& c) {
  std::string base = !r.users.empty() ? r.users[0] : !r.accounts.empty() ? r.accounts[0] : "resv";
  for (int i = 1;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (std::none_of(c.reservations.begin(), c.reservations.end(),
                     [&](const ReservationSnap& o) { return o.name == n; }))
      return n;
  }
}

}  // namespace

Result<ReservationSnap> ApplyResvRequest(const ResvRequest& q, const ReservationSnap* existing,
                                         const ClusterSnapshot& c, int64_t now) {
  bool create = existing == nullptr;
  ReservationSnap r = create ? ReservationSnap{} : *existing;
  if (create && !q.name.empty()) {
    for (const auto& o : c.reservations)
      if (o.name == q.name) return AlreadyExists("reservation " + q.name + " already exists");
    r.name = q.name;
  }
  TESSERA_RETURN_IF_ERROR(ApplyTimes(q, create, now, &r));
  TESSERA_RETURN_IF_ERROR(ApplyFlags(q, create, &r));
  TESSERA_RETURN_IF_ERROR(ApplyList(q.users, create, "Users", &r.users));
  TESSERA_RETURN_IF_ERROR(ApplyList(q.accounts, create, "Accounts", &r.accounts));
  if (r.users.empty() && r.accounts.empty())
    return InvalidArgument("Users or Accounts must be given (who may use the reservation)");
  if (q.partition) {
    if (!q.partition->empty() &&
        std::none_of(c.partitions.begin(), c.partitions.end(),
                     [&](const PartitionSnap& p) { return p.name == *q.partition; }))
      return InvalidArgument("invalid partition name specified: " + *q.partition);
    r.partition = *q.partition;
  }
  if (create && r.name.empty()) r.name = NewName(r, c);
  if (create && !q.nodes && !q.node_cnt) return InvalidArgument("Nodes or NodeCnt must be given");
  TESSERA_RETURN_IF_ERROR(PickNodes(q, c, now, &r));
  if (r.nodes.empty()) return InvalidArgument("the reservation holds no nodes");
  for (const auto& n : r.nodes) {
    std::string why = NodeConflict(r, n, c, now);
    if (!why.empty()) return FailedPrecondition("Requested nodes are busy: " + why);
  }
  return r;
}

}  // namespace tessera::sched
