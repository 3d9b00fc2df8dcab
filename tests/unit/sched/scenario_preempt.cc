#include "tests/unit/sched/scenario_preempt.h"

#include <sstream>
#include <vector>

namespace tessera::sched::testing {
namespace {

std::vector<std::string> Items(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string x; std::getline(in, x, sep);)
    if (!x.empty()) out.push_back(x);
  return out;
}

bool ToI64(const std::string& v, int64_t* out) {
  try {
    size_t pos = 0;
    *out = std::stoll(v, &pos);
    return pos == v.size();
  } catch (...) {
    return false;
  }
}

std::string Show(const Preemption& p) {
  std::string s = "preemptor " + std::to_string(p.preemptor) + " victims";
  for (const auto& v : p.victims)
    s += " " + std::to_string(v.job_id) + "(" + v.mode + ",grace=" + std::to_string(v.grace_time) + ")";
  s += " pending_victims";
  for (uint64_t v : p.pending_victims) s += " " + std::to_string(v);
  return s;
}

}  // namespace

bool RunningPreemptKey(RunningSnap& r, const std::string& key, const std::string& value,
                       std::string* err) {
  int64_t n = 0;
  if (key == "nopreempt") {
    r.preemptable = false;
    return true;
  }
  if (key == "units") {  // n1:0+1,n2:3 (after nodes=: keys come sorted)
    for (const auto& spec : Items(value, ',')) {
      auto f = Items(spec, ':');
      for (auto& u : r.nodes)
        if (f.size() == 2 && u.node == f[0])
          for (const auto& i : Items(f[1], '+')) u.gpu_indices.push_back(static_cast<uint32_t>(std::stoul(i)));
    }
    return true;
  }
  if (key != "priority" && key != "start" && key != "preempted_for") return false;
  if (!ToI64(value, &n)) {
    *err = "bad number " + value + " for running key " + key;
    return true;
  }
  if (key == "priority") r.priority = n;
  else if (key == "start") r.start_time = n;
  else r.preempted_for = static_cast<uint64_t>(n);
  return true;
}

std::string CheckPreemptExpect(const Expect& e, const CycleResult& r, bool* handled) {
  *handled = e.kind == "preempt" || e.kind == "nopreempt";
  if (!*handled) return "";
  const Preemption* p = nullptr;
  std::string all;
  for (const auto& x : r.preemptions) {
    all += (all.empty() ? "" : "; ") + Show(x);
    if (x.preemptor == e.job) p = &x;
  }
  std::string got = " (got: " + (all.empty() ? std::string("no preemption") : all) + ")";
  if (e.kind == "nopreempt") return p ? "expected no preemption for this job" + got : "";
  if (!p) return "expected a preemption" + got;
  for (const auto& a : e.args) {
    size_t eq = a.find('=');
    std::string k = a.substr(0, eq), v = eq == std::string::npos ? "" : a.substr(eq + 1);
    std::vector<std::string> want = Items(v, ','), have;
    if (k == "victims") for (const auto& x : p->victims) have.push_back(std::to_string(x.job_id));
    else if (k == "modes") for (const auto& x : p->victims) have.push_back(x.mode);
    else if (k == "grace") for (const auto& x : p->victims) have.push_back(std::to_string(x.grace_time));
    else if (k == "pending_victims") for (uint64_t x : p->pending_victims) have.push_back(std::to_string(x));
    else return "unknown preempt expectation key " + k;
    if (want != have) return "expected " + a + got;
  }
  return "";
}

}  // namespace tessera::sched::testing
