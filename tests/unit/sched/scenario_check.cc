// RunScenario: runs one cycle over a parsed scenario and checks its expectations.
#include <map>
#include <set>
#include <sstream>

#include "common/config_file.h"
#include "common/hostlist.h"
#include "tests/unit/sched/scenario.h"
#include "tests/unit/sched/scenario_preempt.h"
#include "tests/unit/sched/scenario_fairshare.h"
#include "tests/unit/sched/scenario_queues.h"

namespace tessera::sched::testing {
namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

std::set<std::string> NodeSet(const std::string& expr) {
  auto h = ExpandHostlist(expr);
  return h.ok() ? std::set<std::string>(h->begin(), h->end()) : std::set<std::string>{"<bad hostlist>"};
}

std::string Show(const std::set<std::string>& s) {
  return CompressHostlist(std::vector<std::string>(s.begin(), s.end()));
}

std::map<std::string, std::string> KV(const std::vector<std::string>& args) {
  std::map<std::string, std::string> kv;
  for (const auto& a : args) {
    size_t eq = a.find('=');
    kv[a.substr(0, eq)] = eq == std::string::npos ? "" : a.substr(eq + 1);
  }
  return kv;
}

std::string Describe(const Decision& d) {
  std::ostringstream o;
  if (d.kind == Decision::Kind::kStart) {
    o << "start on";
    for (const auto& p : d.placement) o << " " << p.node << "(tasks=" << p.tasks << ",gpus=" << p.gpu_indices.size() << ")";
    if (d.backfilled) o << " [backfilled]";
  } else {
    o << "pending " << d.reason;
    if (d.expected_start) o << " reserved at " << d.expected_start << " on " << CompressHostlist(d.reserved_nodes);
  }
  return o.str();
}

// "n1=2,n2=2" against a per-node count.
std::string CheckCounts(const std::string& spec, const Decision& d, bool gpus) {
  std::map<std::string, uint64_t> want, got;
  std::istringstream in(spec);
  for (std::string item; std::getline(in, item, ',');) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) return "bad count spec " + spec;
    want[item.substr(0, eq)] = std::stoull(item.substr(eq + 1));
  }
  for (const auto& p : d.placement) got[p.node] = gpus ? p.gpu_indices.size() : p.tasks;
  return want == got ? "" : "counts differ";
}

std::string CheckOne(const Scenario& s, const Expect& e, const CycleResult& r, const SchedConfig& cfg) {
  bool preempt_kind = false;  // issue 16 §4 (scenario_preempt.cc)
  std::string preempt_why = CheckPreemptExpect(e, r, &preempt_kind);
  if (preempt_kind) return preempt_why;
  if (std::string why; CheckTopologyExpect(s, e, r, &why)) return why;
  if (std::string why; CheckResvExpect(s, e, &why)) return why;  // issue 17 §1
  if (std::string fs = CheckFairshareExpect(s, e); fs != "?") return fs;  // issue 16
  if (std::string q = CheckQueueExpect(s, e, r, cfg); q != "?") return q;  // issue 16 §2
  const JobSnap* job = nullptr;
  for (const auto& j : s.snap.pending)
    if (j.id == e.job) job = &j;
  if (!job) return "no pending job " + std::to_string(e.job);
  const Decision* d = nullptr;
  for (const auto& x : r.decisions)
    if (x.job_id == e.job) d = &x;
  if (!d) return "no decision for job " + std::to_string(e.job);
  std::string got = " (got: " + Describe(*d) + ")";
  bool started = d->kind == Decision::Kind::kStart;
  if (e.kind == "start" || e.kind == "backfill") {
    if (!started) return "expected job to start" + got;
    if (e.kind == "backfill" && !d->backfilled) return "expected a backfill start" + got;
    if (!e.args.empty()) {
      std::set<std::string> nodes;
      for (const auto& p : d->placement) nodes.insert(p.node);
      if (nodes != NodeSet(e.args[0])) return "expected nodes " + e.args[0] + got;
    }
    return "";
  }
  if (e.kind == "pending") {
    if (started) return "expected pending " + Join(e.args) + got;
    if (!e.args.empty() && d->reason != Join(e.args)) return "expected reason " + Join(e.args) + got;
    return "";
  }
  if (e.kind == "reserve") {
    auto kv = KV(e.args);
    if (started || !d->expected_start) return "expected a reservation" + got;
    if (kv.count("at") && std::to_string(d->expected_start) != kv["at"]) return "expected start at " + kv["at"] + got;
    if (kv.count("nodes") && std::set<std::string>(d->reserved_nodes.begin(), d->reserved_nodes.end()) != NodeSet(kv["nodes"]))
      return "expected reserved nodes " + kv["nodes"] + got;
    // bf_oldest (issue 17 §2): oldest=yes when held as the oldest job, ahead of the order
    if (kv.count("oldest") && (kv["oldest"] == "yes") != d->oldest)
      return std::string("expected ") + (kv["oldest"] == "yes" ? "" : "no ") + "reservation as the oldest job" + got;
    return "";
  }
  if (e.kind == "noreserve") return d->expected_start ? "expected no reservation" + got : "";
  if (e.kind == "tasks" || e.kind == "gpus") {
    if (!started || e.args.empty()) return "expected a start with " + e.kind + got;
    std::string why = CheckCounts(e.args[0], *d, e.kind == "gpus");
    return why.empty() ? "" : "expected " + e.kind + " " + e.args[0] + got;
  }
  if (e.kind == "priority") {
    if (e.args.empty() || std::to_string(d->priority) != e.args[0])
      return "expected priority " + Join(e.args) + " got " + std::to_string(d->priority);
    return "";
  }
  if (e.kind == "unsatisfiable" || e.kind == "satisfiable") {
    Status st = CheckSatisfiable(*job, s.snap);
    if (e.kind == "satisfiable") return st.ok() ? "" : "expected satisfiable, got " + st.message();
    if (st.ok()) return "expected unsatisfiable";
    return st.message().find(Join(e.args)) == std::string::npos ? "message \"" + st.message() + "\" lacks \"" + Join(e.args) + "\"" : "";
  }
  if (e.kind == "submit_error" || e.kind == "submit_ok") {
    ClusterSnapshot others = s.snap;
    others.pending.erase(std::remove_if(others.pending.begin(), others.pending.end(),
                                        [&](const JobSnap& j) { return j.id == e.job; }),
                         others.pending.end());
    Status st = CheckSubmit(*job, others, cfg);
    if (e.kind == "submit_ok") return st.ok() ? "" : "expected submit ok, got " + st.message();
    if (st.ok()) return "expected a submit error";
    return st.message().find(Join(e.args)) == std::string::npos ? "message \"" + st.message() + "\" lacks \"" + Join(e.args) + "\"" : "";
  }
  if (e.kind == "assoc") return CheckAssocExpect(e, *job, cfg);
  return "unknown expectation \"" + e.kind + "\"";
}

bool SameDecisions(const CycleResult& a, const CycleResult& b) {
  if (a.decisions.size() != b.decisions.size()) return false;
  for (size_t i = 0; i < a.decisions.size(); ++i)
    if (Describe(a.decisions[i]) != Describe(b.decisions[i])) return false;
  return true;
}

}  // namespace

std::vector<std::string> RunScenario(const Scenario& given) {
  std::vector<std::string> errors;
  const Scenario& s0 = given;
  auto where = [&](int line) { return s0.file + ":" + std::to_string(line) + ": "; };
  std::string text;
  for (const auto& l : s0.config_text) text += l + "\n";
  auto lines = ParseConfigText(text, s0.file + "[config]");
  Result<SchedConfig> cfg = lines.ok() ? BuildSchedConfig(*lines) : Result<SchedConfig>(lines.status());
  for (const auto& e : s0.expects) {
    if (e.kind != "config_error") continue;
    if (cfg.ok()) errors.push_back(where(e.line) + "expected a config error");
    else if (cfg.status().message().find(Join(e.args)) == std::string::npos)
      errors.push_back(where(e.line) + "config error \"" + cfg.status().message() + "\" lacks \"" + Join(e.args) + "\"");
    return errors;
  }
  if (!cfg.ok()) return {s0.file + ": config: " + cfg.status().message()};
  Scenario s = given;                    // fair share (issue 16): factors filled from usage
  ApplyScenarioFairshare(s, *cfg);
  if (!s.topology_error.empty()) {  // only kept when the scenario expects it
    for (const auto& e : s.expects)
      if (std::string why; CheckTopologyExpect(s, e, CycleResult{}, &why) && !why.empty())
        errors.push_back(where(e.line) + why);
    return errors;
  }
  Registry reg = Registry::Builtin();
  CycleResult r = RunCycle(s.snap, *cfg, reg);
  if (!r.status.ok()) return {s.file + ": RunCycle: " + r.status.message()};
  if (!SameDecisions(r, RunCycle(s.snap, *cfg, reg))) errors.push_back(s.file + ": two runs disagree");
  for (const auto& e : s.expects) {
    std::string why = CheckOne(s, e, r, *cfg);
    if (!why.empty()) errors.push_back(where(e.line) + why);
  }
  for (const auto& m : UnexpectedResvErrors(s)) errors.push_back(s.file + ": " + m);
  return errors;
}

}  // namespace tessera::sched::testing
