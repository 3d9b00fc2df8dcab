// Reservations in scenarios (issue 17 §1; format in tests/scenarios/README.md):
//   resv create KEY=VALUE...   (scontrol's keys; times as epoch seconds)
//   resv update KEY=VALUE...   (ReservationName= names the one to change)
//   resv delete NAME
//   expect resv NAME [nodes=HOSTLIST] [start=EPOCH] [end=EPOCH] [flags=A,B] [users=a,b]
//   expect resv_error TEXT     (some refused resv line's error contains TEXT)
#include <algorithm>
#include <set>
#include <sstream>

#include "common/hostlist.h"
#include "ctld/sched/reservation.h"
#include "ctld/sched/reservation_request.h"
#include "tests/unit/sched/scenario.h"

namespace tessera::sched::testing {
namespace {

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

ReservationSnap* FindResv(ClusterSnapshot& c, const std::string& name) {
  for (auto& r : c.reservations)
    if (r.name == name) return &r;
  return nullptr;
}

Status ApplyLine(Scenario& sc, const std::string& text) {
  auto w = Words(text);
  if (w.empty()) return InvalidArgument("resv create|update|delete ...");
  if (w[0] == "delete") {
    if (w.size() != 2) return InvalidArgument("resv delete NAME");
    auto& v = sc.snap.reservations;
    auto it = std::find_if(v.begin(), v.end(), [&](const ReservationSnap& r) { return r.name == w[1]; });
    if (it == v.end()) return NotFound("reservation " + w[1] + " not found");
    v.erase(it);
    return Status::Ok();
  }
  if (w[0] != "create" && w[0] != "update") return InvalidArgument("resv create|update|delete ...");
  ResvKeyValues kv;
  for (size_t i = 1; i < w.size(); ++i) {
    size_t eq = w[i].find('=');
    if (eq == std::string::npos) return InvalidArgument("expected KEY=VALUE, got " + w[i]);
    kv.emplace_back(w[i].substr(0, eq), w[i].substr(eq + 1));
  }
  auto q = ParseResvRequest(kv);
  if (!q.ok()) return q.status();
  const ReservationSnap* old = nullptr;
  if (w[0] == "update") {
    old = FindResv(sc.snap, q->name);
    if (!old) return NotFound("reservation " + q->name + " not found");
  }
  auto r = ApplyResvRequest(*q, old, sc.snap, sc.snap.now);
  if (!r.ok()) return r.status();
  if (ReservationSnap* cur = FindResv(sc.snap, r->name)) *cur = *r;
  else sc.snap.reservations.push_back(*r);
  return Status::Ok();
}

}  // namespace

Status FinishScenarioResv(Scenario& sc) {
  for (const auto& [line, text] : sc.resv_lines) {
    Status st = ApplyLine(sc, text);
    if (!st.ok()) sc.resv_errors.push_back("line " + std::to_string(line) + ": " + st.message());
  }
  return Status::Ok();
}

bool ResvExpectHasNoJob(const std::string& kind) { return kind == "resv" || kind == "resv_error"; }

bool CheckResvExpect(const Scenario& s, const Expect& e, std::string* why) {
  if (e.kind == "resv_error") {
    std::string text = Join(e.args);
    bool found = std::any_of(s.resv_errors.begin(), s.resv_errors.end(),
                             [&](const std::string& m) { return m.find(text) != std::string::npos; });
    *why = found ? "" : "no refused resv line says \"" + text + "\" (refused: " +
                            std::to_string(s.resv_errors.size()) + ")";
    return true;
  }
  if (e.kind != "resv") return false;
  if (e.args.empty()) return *why = "expect resv NAME ...", true;
  const ReservationSnap* r = nullptr;
  for (const auto& x : s.snap.reservations)
    if (x.name == e.args[0]) r = &x;
  if (!r) return *why = "no reservation " + e.args[0], true;
  std::string got = " (got nodes=" + CompressHostlist(r->nodes) + " start=" + std::to_string(r->start) +
                    " end=" + std::to_string(r->end) + " flags=" + ResvFlagsText(r->flags) + ")";
  why->clear();
  for (size_t i = 1; i < e.args.size(); ++i) {
    const std::string& a = e.args[i];
    size_t eq = a.find('=');
    std::string k = a.substr(0, eq), v = eq == std::string::npos ? "" : a.substr(eq + 1);
    bool ok = true;
    if (k == "nodes") {
      auto want = ExpandHostlist(v);
      ok = want.ok() && std::set<std::string>(want->begin(), want->end()) ==
                            std::set<std::string>(r->nodes.begin(), r->nodes.end());
    } else if (k == "start") ok = std::to_string(r->start) == v;
    else if (k == "end") ok = std::to_string(r->end) == v;
    else if (k == "flags") ok = ResvFlagsText(r->flags) == v;
    else if (k == "users") {
      std::string j;
      for (const auto& u : r->users) j += (j.empty() ? "" : ",") + u;
      ok = j == v;
    }
    else return *why = "unknown resv key " + k, true;
    if (!ok) return *why = "expected " + a + got, true;
  }
  return true;
}

std::vector<std::string> UnexpectedResvErrors(const Scenario& s) {
  std::vector<std::string> out;
  for (const auto& m : s.resv_errors) {
    bool expected = false;
    for (const auto& e : s.expects)
      expected |= e.kind == "resv_error" && m.find(Join(e.args)) != std::string::npos;
    if (!expected) out.push_back("resv refused unexpectedly: " + m);
  }
  return out;
}

}  // namespace tessera::sched::testing
