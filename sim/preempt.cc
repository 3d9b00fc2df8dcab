#include "sim/preempt.h"

#include <algorithm>

namespace tessera::sim {
namespace {

// `a` less what `b` uses of it, node by node (the part of a suspended victim's allocation its
// preemptor does not take).
std::vector<sched::NodePlacement> Minus(const std::vector<sched::NodePlacement>& a,
                                        const std::vector<sched::NodePlacement>& b) {
  std::vector<sched::NodePlacement> out;
  for (const auto& x : a) {
    sched::NodePlacement r = x;
    for (const auto& y : b) {
      if (y.node != x.node) continue;
      r.cpus -= std::min(r.cpus, y.cpus);
      r.mem_mib -= std::min(r.mem_mib, y.mem_mib);
      std::erase_if(r.gpu_indices, [&](uint32_t g) {
        return std::count(y.gpu_indices.begin(), y.gpu_indices.end(), g) > 0;
      });
      std::erase_if(r.mig_uuids, [&](const std::string& m) {
        return std::count(y.mig_uuids.begin(), y.mig_uuids.end(), m) > 0;
      });
    }
    out.push_back(std::move(r));
  }
  return out;
}

void Erase(std::vector<size_t>& v, size_t x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it != v.end()) v.erase(it);
}

}  // namespace

bool SimPreempt::Active(uint64_t id, int64_t now) const {
  if (plans_.count(id) || victims_.count(id)) return true;
  const SimJob& j = run_.jobs[id - 1];
  return j.start >= 0 && j.end > now;
}

void SimPreempt::Apply(const std::vector<sched::Preemption>& ps, int64_t now,
                       const std::function<void(size_t, int64_t)>& end_at, const LiveOps& ops,
                       const StartFn& start, std::vector<size_t>& pending) {
  for (const auto& p : ps) {
    if (p.victims.empty() || plans_.count(p.preemptor)) continue;
    plans_[p.preemptor] = p.placement;
    Erase(pending, p.preemptor - 1);  // waits for its victims on its planned place
    for (const auto& v : p.victims) {
      size_t i = v.job_id - 1;
      SimJob& j = run_.jobs[i];
      ++run_.preemptions[v.mode];
      Victim vic{p.preemptor, v.mode, now, 0, {}};
      if (v.mode == "SUSPEND") {
        ops.leave(i);
        vic.held = ops.placement(v.job_id);
        ops.take(vic.held, true);  // still its own until the preemptor starts
      } else {
        vic.kill_at = now + std::max<int64_t>(0, v.grace_time);
        if (vic.kill_at < j.end) {
          j.end = vic.kill_at;
          end_at(i, vic.kill_at);
        }
      }
      victims_[v.job_id] = std::move(vic);
    }
  }
  AfterEnds(now, start, ops, pending);
}

bool SimPreempt::Ended(SimJob& j, size_t) {
  auto it = victims_.find(j.snap.id);
  if (it == victims_.end() || it->second.mode == "SUSPEND") return false;
  bool killed = j.end >= it->second.kill_at;  // else it completed within its grace time
  std::string mode = it->second.mode;
  victims_.erase(it);
  if (!killed) return false;
  j.preempted = mode;
  if (mode != "REQUEUE") return false;
  ++j.requeues;
  j.start = j.end = -1;
  j.cpus = j.gpus = 0;
  j.nodes.clear();
  return true;
}

void SimPreempt::Started(uint64_t preemptor, const std::vector<sched::NodePlacement>& at,
                         const LiveOps& ops) {
  for (auto& [id, v] : victims_)
    if (v.preemptor == preemptor && v.mode == "SUSPEND") {
      v.held = Minus(ops.placement(id), at);
      ops.take(v.held, true);
    }
}

void SimPreempt::AfterEnds(int64_t now, const StartFn& start, const LiveOps& ops,
                           std::vector<size_t>& pending) {
  for (auto it = plans_.begin(); it != plans_.end();) {
    uint64_t id = it->first;
    bool waits = std::any_of(victims_.begin(), victims_.end(), [&](const auto& v) {
      return v.second.preemptor == id && v.second.mode != "SUSPEND";
    });
    if (waits) {
      ++it;
      continue;
    }
    for (auto& [vid, v] : victims_)  // its suspended victims lend it their allocation
      if (v.preemptor == id && v.mode == "SUSPEND") ops.take(v.held, false), v.held.clear();
    if (ops.fits(it->second)) {
      start(id - 1, it->second, now);
      Started(id, it->second, ops);
    } else {
      pending.push_back(id - 1);  // its place was taken meanwhile: the scheduler decides
    }
    it = plans_.erase(it);
  }
  for (auto it = victims_.begin(); it != victims_.end();) {
    Victim& v = it->second;
    if (v.mode != "SUSPEND" || Active(v.preemptor, now)) {
      ++it;
      continue;
    }
    ops.take(v.held, false);
    std::vector<sched::NodePlacement> own = ops.placement(it->first);
    if (!ops.fits(own)) {  // not free yet: retried at the next event
      ops.take(v.held, true);
      ++it;
      continue;
    }
    SimJob& j = run_.jobs[it->first - 1];
    j.suspended_s += now - v.since;
    ops.resume(it->first - 1, j.end + (now - v.since));
    it = victims_.erase(it);
  }
}

void SimPreempt::AdjustSnapshot(sched::ClusterSnapshot& snap) const {
  if (victims_.empty()) return;
  for (auto& r : snap.running) {
    auto it = victims_.find(r.id);
    if (it == victims_.end()) continue;
    r.preemptable = false;
    r.preempted_for = it->second.preemptor;
  }
}

}  // namespace tessera::sim
