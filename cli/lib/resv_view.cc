#include "cli/lib/resv_view.h"

#include <cstdio>

#include "cli/lib/text_util.h"
#include "cli/lib/time_spec.h"
#include "common/duration.h"

namespace tessera::cli {
namespace {

std::string OrNull(const std::string& s) { return s.empty() ? "(null)" : s; }

std::string Join(const google::protobuf::RepeatedPtrField<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

// scontrol's Duration: [D-]HH:MM:SS.
std::string ResvDuration(int64_t s) {
  char buf[48];
  int64_t d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
  if (d) snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", (long long)d, (long long)h, (long long)m, (long long)sec);
  else snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", (long long)h, (long long)m, (long long)sec);
  return buf;
}

bool NameKey(const std::string& lower) {
  return StartsWith(lower, "reservationname=") || StartsWith(lower, "reservation=");
}

}  // namespace

bool IsReservationWord(const std::string& w) {
  return w == "reservation" || w == "reservations" || w == "res" || w == "reservationname";
}

Result<pb::ReservationRequest> ReservationArgs(const std::vector<std::string>& words, size_t from,
                                               int64_t now) {
  pb::ReservationRequest req;
  for (size_t i = from; i < words.size(); ++i) {
    size_t eq = words[i].find('=');
    if (eq == std::string::npos || eq == 0)
      return InvalidArgument("expected KEY=VALUE, got \"" + words[i] + "\"");
    std::string key = words[i].substr(0, eq), value = words[i].substr(eq + 1);
    std::string lower = ToLower(key);
    if (lower == "starttime" || lower == "endtime") {
      auto t = ParseTimeSpec(value, now);
      if (!t.ok()) return InvalidArgument(key + ": " + t.status().message());
      value = std::to_string(*t);
    }
    auto* kv = req.add_args();
    kv->set_key(key);
    kv->set_value(value);
  }
  return req;
}

int ReservationCommand(CommandContext& ctx, ControllerApi& api, const std::vector<std::string>& w) {
  if (w.size() < 2) return -1;
  std::string cmd = ToLower(w[0]), what = ToLower(w[1]);
  size_t from;
  if (IsReservationWord(what)) from = 2;
  else if (NameKey(what)) from = 1;
  else return -1;
  if (cmd == "delete") {
    std::string name = from == 1 ? w[1].substr(w[1].find('=') + 1) : (w.size() > 2 ? w[2] : "");
    if (StartsWith(ToLower(name), "reservationname=")) name = name.substr(name.find('=') + 1);
    if (name.empty() || w.size() > from + 1)
      return Fail(ctx, "usage: tcontrol delete reservation NAME");
    pb::ReservationRequest req;
    req.set_name(name);
    auto resp = api.DeleteReservation(req);
    if (!resp.ok()) return Fail(ctx, "Error deleting the reservation: " + resp.status().message());
    return 0;
  }
  if (cmd != "create" && cmd != "update") return -1;
  auto req = ReservationArgs(w, from, ctx.now);
  if (!req.ok()) return Fail(ctx, req.status().message());
  if (req->args_size() == 0) return Fail(ctx, cmd + " reservation needs KEY=VALUE options");
  auto resp = cmd == "create" ? api.CreateReservation(*req) : api.UpdateReservation(*req);
  if (!resp.ok())
    return Fail(ctx, std::string("Error ") + (cmd == "create" ? "creating" : "updating") +
                         " the reservation: " + resp.status().message());
  *ctx.out << resp->message() << "\n";
  return 0;
}

std::string FormatReservation(const pb::Reservation& r, int64_t now) {
  (void)now;
  std::string s = "ReservationName=" + r.name() + " StartTime=" + FormatTimestamp(r.start_time()) +
                  " EndTime=" + FormatTimestamp(r.end_time()) +
                  " Duration=" + ResvDuration(r.end_time() - r.start_time()) + "\n";
  s += "   Nodes=" + OrNull(r.nodes()) + " NodeCnt=" + std::to_string(r.node_count()) +
       " CoreCnt=" + std::to_string(r.cpu_count()) + " Features=(null) PartitionName=" +
       OrNull(r.partition()) + " Flags=" + OrNull(r.flags()) + "\n";
  s += "   TRES=cpu=" + std::to_string(r.cpu_count()) + "\n";
  s += "   Users=" + OrNull(Join(r.users())) + " Groups=(null) Accounts=" +
       OrNull(Join(r.accounts())) + " Licenses=(null) State=" +
       (r.active() ? "ACTIVE" : "INACTIVE") + " BurstBuffer=(null)\n";
  s += "   MaxStartDelay=(null)\n";
  return s;
}

int ShowReservations(CommandContext& ctx, ControllerApi& api, const std::string& name,
                     bool oneliner) {
  pb::ListReservationsRequest req;
  req.set_name(name);
  auto resp = api.ListReservations(req);
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  if (resp->reservations_size() == 0) {
    *ctx.out << "No reservations in the system\n";
    return 0;
  }
  bool first = true;
  for (const auto& r : resp->reservations()) {
    std::string rec = FormatReservation(r, ctx.now);
    if (oneliner) {
      for (size_t pos; (pos = rec.find("\n   ")) != std::string::npos;) rec.replace(pos, 4, " ");
    } else if (!first) {
      *ctx.out << "\n";
    }
    *ctx.out << rec;
    first = false;
  }
  return 0;
}

int PrintReservationTable(CommandContext& ctx, ControllerApi& api, bool header) {
  auto resp = api.ListReservations(pb::ListReservationsRequest());
  if (!resp.ok()) return Fail(ctx, resp.status().message());
  auto line = [&](const std::string& n, const std::string& st, const std::string& s,
                  const std::string& e, const std::string& d, const std::string& nodes) {
    *ctx.out << PadField(n, 14, false, false) << " " << PadField(st, 8, true, false) << " "
             << PadField(s, 19, true, false) << " " << PadField(e, 19, true, false) << " "
             << PadField(d, 12, true, false) << "  " << nodes << "\n";
  };
  if (resp->reservations_size() == 0) {
    *ctx.out << "No reservations in the system\n";
    return 0;
  }
  if (header) line("RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST");
  for (const auto& r : resp->reservations())
    line(r.name(), r.active() ? "ACTIVE" : "INACTIVE", FormatTimestamp(r.start_time()),
         FormatTimestamp(r.end_time()), FormatDuration(r.end_time() - r.start_time()), r.nodes());
  return 0;
}

}  // namespace tessera::cli
