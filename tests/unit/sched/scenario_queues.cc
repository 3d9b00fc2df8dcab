#include "tests/unit/sched/scenario_queues.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/duration.h"
#include "tests/unit/sched/scenario.h"
#include "tests/unit/sched/scenario_preempt.h"

namespace tessera::sched::testing {
namespace {

std::string KeyOf(const std::string& a) { return a.substr(0, a.find('=')); }
std::string ValOf(const std::string& a) {
  size_t eq = a.find('=');
  return eq == std::string::npos ? "" : a.substr(eq + 1);
}

// The job a running entry of the scenario stands for when it is requeued: one task per node.
JobSnap JobOf(const RunningSnap& r) {
  JobSnap j;
  j.id = r.id;
  j.partition = r.partition;
  j.user = r.user.empty() ? "u" : r.user;
  j.account = r.account;
  j.qos = r.qos;
  j.submit_time = r.start_time;
  GroupReq g;
  g.count = static_cast<uint32_t>(r.nodes.size());
  g.tasks_per_node = 1;
  if (!r.nodes.empty()) {
    g.per_task.cpus = r.nodes[0].cpus;
    g.per_task.gpus = r.nodes[0].gpus;
    g.per_task.mem_mib = r.nodes[0].mem_mib;
  }
  j.groups.push_back(g);
  j.nodes_min = j.nodes_max = g.count;
  return j;
}

// What the multi-cycle run leaves.
struct Outcome {
  std::map<std::string, int64_t> evictions;   // account -> victims
  std::vector<RunningSnap> running;
  std::vector<JobSnap> pending;
  std::string error;
};

// Node free counts and GPU flags from `running` (GPU units: indices given, else lowest free).
void Occupy(const ClusterSnapshot& base, std::vector<RunningSnap>& running, ClusterSnapshot& out) {
  out.nodes = base.nodes;
  for (auto& n : out.nodes) {
    n.cpus_free = n.cpus_total, n.mem_free = n.mem_total, n.idle = true;
    for (auto& g : n.gpus) g.free = true;
  }
  std::map<std::string, NodeSnap*> by;
  for (auto& n : out.nodes) by[n.name] = &n;
  for (auto& r : running)
    for (auto& u : r.nodes) {
      NodeSnap* n = by.count(u.node) ? by[u.node] : nullptr;
      if (!n) continue;
      n->cpus_free -= std::min(n->cpus_free, u.cpus);
      n->mem_free -= std::min(n->mem_free, u.mem_mib);
      n->idle = false;
      if (u.gpu_indices.empty())
        for (auto& g : n->gpus)
          if (u.gpu_indices.size() < u.gpus && g.free) u.gpu_indices.push_back(g.index);
      for (uint32_t i : u.gpu_indices)
        for (auto& g : n->gpus)
          if (g.index == i && g.mig_uuid.empty()) g.free = false;
    }
}

Outcome RunCycles(const Scenario& sc, const SchedConfig& cfg) {
  Outcome o;
  ClusterSnapshot snap = sc.snap;
  std::vector<RunningSnap> running = sc.snap.running;
  std::vector<JobSnap> pending = sc.snap.pending;
  std::map<uint64_t, JobSnap> jobs;
  for (const auto& j : pending) jobs[j.id] = j;
  for (const auto& r : running) jobs[r.id] = JobOf(r);
  Registry reg = Registry::Builtin();
  int64_t now = sc.snap.now;
  for (int c = 0; c <= sc.queue_cycles; ++c, now += sc.queue_step) {
    running.erase(std::remove_if(running.begin(), running.end(), [&](const RunningSnap& r) { return r.end_time <= now; }),
                  running.end());
    Occupy(sc.snap, running, snap);
    snap.now = now;
    snap.running = running;
    snap.pending = pending;
    CycleResult r = RunCycle(snap, cfg, reg);
    if (!r.status.ok()) {
      o.error = "cycle " + std::to_string(c) + ": " + r.status.message();
      return o;
    }
    std::set<uint64_t> gone;
    for (const auto& p : r.preemptions)
      for (const auto& v : p.victims) {
        auto it = std::find_if(running.begin(), running.end(), [&](const RunningSnap& x) { return x.id == v.job_id; });
        if (it == running.end()) continue;
        ++o.evictions[it->account];
        if (v.mode != "CANCEL") pending.push_back(jobs[v.job_id]);  // REQUEUE (SUSPEND: the same here)
        running.erase(it);
      }
    for (const auto& d : r.decisions) {
      if (d.kind != Decision::Kind::kStart) continue;
      const JobSnap& j = jobs[d.job_id];
      RunningSnap x;
      x.id = j.id, x.user = j.user, x.account = j.account, x.qos = j.qos, x.partition = j.partition;
      x.start_time = now;
      x.end_time = j.time_limit > 0 ? now + j.time_limit : kNever;
      for (const auto& p : d.placement)
        x.nodes.push_back({p.node, p.cpus, p.mem_mib, static_cast<uint32_t>(p.gpu_indices.size()), p.gpu_indices, {}});
      running.push_back(x);
      gone.insert(j.id);
    }
    pending.erase(std::remove_if(pending.begin(), pending.end(), [&](const JobSnap& j) { return gone.count(j.id) > 0; }),
                  pending.end());
  }
  o.running = running;
  o.pending = pending;
  return o;
}

}  // namespace

Result<bool> QueueScenarioLine(const std::vector<std::string>& w, Scenario& sc) {
  if (w.empty() || w[0] != "cycles") return false;
  if (w.size() < 2) return InvalidArgument("cycles N [step=SECONDS]");
  auto n = ParseUint(w[1], "cycles");
  if (!n.ok() || *n > 10000) return InvalidArgument("bad cycle count \"" + w[1] + "\" (0..10000)");
  sc.queue_cycles = static_cast<int>(*n);
  for (size_t i = 2; i < w.size(); ++i) {
    if (KeyOf(w[i]) != "step") return InvalidArgument("unknown cycles key " + KeyOf(w[i]));
    auto s = ParseUint(ValOf(w[i]), "step");
    if (!s.ok()) return InvalidArgument("bad step \"" + ValOf(w[i]) + "\"");
    sc.queue_step = static_cast<int64_t>(*s);
  }
  return true;
}

bool QueueExpectHasNoJob(const std::string& kind) {
  return kind == "queue" || kind == "evictions" || kind == "final_gpus" || kind == "queue_warning";
}

std::string CheckQueueExpect(const Scenario& sc, const Expect& e, const CycleResult& first,
                             const SchedConfig& cfg) {
  std::string account = e.args.empty() ? "" : e.args[0];
  if (e.kind == "queue") {
    const QueueShare* q = nullptr;
    std::string all;
    for (const auto& x : first.queues) {
      all += " " + x.account + "(deserved gpus=" + std::to_string(x.deserved.gpu) + " cpus=" +
             std::to_string(x.deserved.cpu) + ", allocated gpus=" + std::to_string(x.allocated.gpu) +
             ", pending gpus=" + std::to_string(x.pending.gpu) + ")";
      if (x.account == account) q = &x;
    }
    if (!q) return "no queue " + account + " (got:" + all + ")";
    for (size_t i = 1; i < e.args.size(); ++i) {
      std::string k = KeyOf(e.args[i]), v = ValOf(e.args[i]);
      std::map<std::string, int64_t> have = {
          {"deserved_gpus", q->deserved.gpu}, {"deserved_cpus", q->deserved.cpu},
          {"allocated_gpus", q->allocated.gpu}, {"allocated_cpus", q->allocated.cpu},
          {"pending_gpus", q->pending.gpu}, {"pending_cpus", q->pending.cpu}};
      if (!have.count(k)) return "unknown queue expectation key " + k;
      if (std::to_string(have[k]) != v) return "expected " + e.args[i] + " (got:" + all + ")";
    }
    return "";
  }
  if (e.kind == "queue_warning") {  // expect queue_warning TEXT (words of one warning)
    std::string want, all;
    for (const auto& a : e.args) want += (want.empty() ? "" : " ") + a;
    for (const auto& w : first.warnings) {
      if (w.find(want) != std::string::npos) return "";
      all += " [" + w + "]";
    }
    return "no warning with \"" + want + "\" (got:" + all + ")";
  }
  if (e.kind == "reclaim") {
    Expect p = e;
    p.kind = "preempt";
    bool handled = false;
    std::string why = CheckPreemptExpect(p, first, &handled);
    if (!why.empty()) return why;
    for (const auto& x : first.preemptions)
      if (x.preemptor == e.job && x.cause != "reclaim") return "the preemption's cause is \"" + x.cause + "\", not reclaim";
    return "";
  }
  if (e.kind != "evictions" && e.kind != "final_gpus" && e.kind != "final_running" && e.kind != "final_pending")
    return "?";
  Outcome o = RunCycles(sc, cfg);
  if (!o.error.empty()) return o.error;
  if (e.kind == "evictions") {
    if (e.args.size() != 2) return "expect evictions ACCOUNT N";
    std::string all;
    for (const auto& [a, n] : o.evictions) all += " " + a + "=" + std::to_string(n);
    int64_t n = o.evictions.count(account) ? o.evictions[account] : 0;
    return std::to_string(n) == e.args[1] ? "" : "expected " + e.args[1] + " evictions from " + account + " (got:" + all + ")";
  }
  if (e.kind == "final_gpus") {
    if (e.args.size() != 2) return "expect final_gpus ACCOUNT N";
    auto under = [&](std::string a) {  // the account or one of its children
      for (int depth = 0; !a.empty() && depth < 64; ++depth) {
        if (a == account) return true;
        auto it = cfg.accounts.find(a);
        a = it == cfg.accounts.end() ? "" : it->second.parent;
      }
      return false;
    };
    int64_t n = 0;
    for (const auto& r : o.running)
      for (const auto& u : r.nodes) n += under(r.account) ? u.gpus : 0;
    return std::to_string(n) == e.args[1] ? "" : "expected " + e.args[1] + " GPUs for " + account + " at the end, got " + std::to_string(n);
  }
  bool running = std::any_of(o.running.begin(), o.running.end(), [&](const RunningSnap& r) { return r.id == e.job; });
  bool pend = std::any_of(o.pending.begin(), o.pending.end(), [&](const JobSnap& j) { return j.id == e.job; });
  if (e.kind == "final_running") return running ? "" : std::string("expected job running at the end, it is ") + (pend ? "pending" : "gone");
  return pend ? "" : std::string("expected job pending at the end, it is ") + (running ? "running" : "gone");
}

}  // namespace tessera::sched::testing
