// Preemption in ctld (issue 16 §4): see preemption.h.
#include "ctld/preemption.h"

#include <csignal>

#include <algorithm>

#include <boost/json.hpp>

#include "ctld/controller.h"
#include "ctld/log.h"

namespace tessera::ctld {
namespace {

bool Active(const JobRecord* j) {
  return j && (j->State() == JobState::kRunning || j->State() == JobState::kSuspended);
}

const NodeAlloc* AllocOn(const JobRecord* j, const std::string& node) {
  if (!j) return nullptr;
  for (const auto& a : j->alloc)
    if (a.node == node) return &a;
  return nullptr;
}

template <typename T>
bool In(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

std::string PreemptedDetail(uint64_t by, const std::string& mode, int64_t grace_time,
                            const std::string& cause) {
  boost::json::object o;
  o["by"] = by;
  o["mode"] = mode;
  o["grace_time"] = grace_time;
  if (!cause.empty()) o["cause"] = cause;  // issue 16 §2: "reclaim"
  return boost::json::serialize(o);
}

std::string PreemptingDetail(const std::vector<sched::PreemptVictim>& victims,
                             const std::string& cause) {
  boost::json::array ids, modes;
  for (const auto& v : victims) {
    ids.push_back(v.job_id);
    modes.push_back(boost::json::string(v.mode));
  }
  boost::json::object o;
  o["victims"] = ids;
  o["mode"] = modes;
  if (!cause.empty()) o["cause"] = cause;  // issue 16 §2: "reclaim"
  return boost::json::serialize(o);
}

void HoldSuspended(sched::ClusterSnapshot& snap, const JobRecord& victim, const JobRecord* by) {
  std::vector<sched::NodeUse> held;
  for (const auto& a : victim.alloc) {
    const NodeAlloc* b = AllocOn(by, a.node);
    sched::NodeUse u;
    u.node = a.node;
    u.cpus = a.cpus - std::min(a.cpus, b ? b->cpus : 0u);
    u.mem_mib = a.mem_mib - std::min(a.mem_mib, b ? b->mem_mib : uint64_t{0});
    for (uint32_t g : a.gpu_indices)
      if (!b || !In(b->gpu_indices, g)) u.gpu_indices.push_back(g);
    for (const auto& m : a.mig_uuids)
      if (!b || !In(b->mig_uuids, m)) u.mig_uuids.push_back(m);
    u.gpus = static_cast<uint32_t>(u.gpu_indices.size() + u.mig_uuids.size());
    for (auto& ns : snap.nodes) {
      if (ns.name != a.node) continue;
      ns.cpus_free -= std::min(ns.cpus_free, u.cpus);
      ns.mem_free -= std::min(ns.mem_free, u.mem_mib);
      ns.idle = false;
      for (auto& g : ns.gpus)
        if ((g.mig_uuid.empty() && In(u.gpu_indices, g.index)) ||
            (!g.mig_uuid.empty() && In(u.mig_uuids, g.mig_uuid)))
          g.free = false;
    }
    held.push_back(std::move(u));
  }
  for (auto& r : snap.running)
    if (r.id == victim.job_id) {
      r.nodes = std::move(held);
      r.preemptable = false;
      return;
    }
}

std::vector<sched::NodePlacement> PlacementOf(const JobRecord& j) {
  std::vector<sched::NodePlacement> out;
  for (const auto& a : j.alloc) {
    sched::NodePlacement p;
    p.node = a.node;
    p.cpus = a.cpus;
    p.mem_mib = a.mem_mib;
    p.gpu_indices = a.gpu_indices;
    p.tasks = a.tasks;
    p.mig_uuids = a.mig_uuids;
    out.push_back(std::move(p));
  }
  return out;
}

void Controller::AdjustPreemptSnapshot(sched::ClusterSnapshot& snap) const {
  if (preempt_.victims.empty()) return;
  for (auto& r : snap.running) {
    auto it = preempt_.victims.find(r.id);
    if (it == preempt_.victims.end()) continue;
    r.preemptable = false;
    if (it->second.mode != "SUSPEND") r.preempted_for = it->second.preemptor;  // still ending
  }
  for (const auto& [id, v] : preempt_.victims) {
    if (v.mode != "SUSPEND") continue;
    auto vj = jobs_.jobs().find(id);
    auto pj = jobs_.jobs().find(v.preemptor);
    if (vj == jobs_.jobs().end() || vj->second.State() != JobState::kSuspended) continue;
    const JobRecord* by = pj != jobs_.jobs().end() && Active(&pj->second) ? &pj->second : nullptr;
    HoldSuspended(snap, vj->second, by);
  }
}

void Controller::ApplyPreemptions(const std::vector<sched::Preemption>& ps) {
  for (const auto& p : ps) ApplyPreemption(p);
  if (!ps.empty()) AfterPreemptChange();
}

bool Controller::ApplyPreemption(const sched::Preemption& p) {
  JobRecord* pre = jobs_.Find(p.preemptor);
  if (!pre || pre->State() != JobState::kPending || pre->held) return false;
  std::vector<JobManager::Planned> plans;
  for (const auto& v : p.victims) {
    JobRecord* j = jobs_.Find(v.job_id);
    if (!j || j->State() != JobState::kRunning || j->cancel_requested || j->requeue_requested ||
        preempt_.victims.count(v.job_id)) {
      Log("preemption for job " + std::to_string(p.preemptor) + " dropped: job " +
          std::to_string(v.job_id) + " is no longer a running victim");
      return false;
    }
    plans.push_back({v.job_id, event::kPreempted, PreemptedDetail(p.preemptor, v.mode, v.grace_time, p.cause)});
    if (v.mode == "REQUEUE") plans.push_back({v.job_id, event::kRequeueRequested, "{}"});
    if (v.mode == "SUSPEND") plans.push_back({v.job_id, event::kSuspended, "{}"});
  }
  if (!p.victims.empty()) {
    plans.push_back({p.preemptor, event::kPreempting, PreemptingDetail(p.victims, p.cause)});
    if (Status st = jobs_.CommitTransitions(plans); !st.ok()) {
      Log("preemption for job " + std::to_string(p.preemptor) + " not recorded (" + st.message() +
          "); nothing preempted");
      return false;
    }
  }
  preempt_.plans[p.preemptor] = {p.placement};
  for (const auto& v : p.victims) {
    PreemptState::Victim pv{p.preemptor, v.mode, v.grace_time, 0};
    Log("job " + std::to_string(v.job_id) + " preempted (" + v.mode + ", GraceTime " +
        std::to_string(v.grace_time) + " s) for job " + std::to_string(p.preemptor));
    JobRecord* j = jobs_.Find(v.job_id);
    StopVictim(*j, pv, false);
    preempt_.victims[v.job_id] = pv;
    if (v.grace_time > 0 && v.mode != "SUSPEND")
      preempt_.victims[v.job_id].kill_at = clock_->Now() + v.grace_time;
  }
  return true;
}

void Controller::StopVictim(JobRecord& v, const PreemptState::Victim& pv, bool cancel_now) {
  uint64_t id = v.job_id;
  NodeRuntime* batch = nodes_.Find(v.alloc.front().node);
  if (pv.mode == "SUSPEND") {
    if (batch && batch->link) SendToNode(*batch, id, SIGSTOP);
    nodes_.Release(v);  // lent to the preemptor (HoldSuspended keeps others off it)
    return;
  }
  if (!cancel_now && pv.grace_time > 0 && batch && batch->link) {
    SendToNode(*batch, id, SIGTERM);  // the grace time starts; the cancel follows (PreemptTick)
    return;
  }
  for (size_t i = 1; i < v.alloc.size(); ++i) {  // the whole gang stops
    NodeRuntime* other = nodes_.Find(v.alloc[i].node);
    if (other && other->link) other->link->Signal(id, 0, v.run);
  }
  if (batch && batch->link) {
    SendToNode(*batch, id, 0);
    return;
  }
  if (pv.mode == "REQUEUE") {
    if (MayStillRun(batch)) return;  // requeued when the node reports the run's end
    nodes_.Release(v);
    jobs_.MarkRequeued(id, "Preempted", nullptr);
  } else {
    FinishJob(v, JobState::kPreempted, 0, 0, 0, "preempted by job " + std::to_string(pv.preemptor),
              nullptr);
  }
}

JobState Controller::PreemptedEndState(uint64_t id, JobState state) {
  auto it = preempt_.victims.find(id);
  if (it == preempt_.victims.end() || it->second.mode != "CANCEL") return state;
  return JobState::kPreempted;
}

void Controller::AfterPreemptChange() {
  for (auto it = preempt_.victims.begin(); it != preempt_.victims.end();) {
    if (!Active(jobs_.Find(it->first))) it = preempt_.victims.erase(it);
    else ++it;
  }
  // Preemptors whose victims are gone (or suspended) start on their planned place now.
  for (auto it = preempt_.plans.begin(); it != preempt_.plans.end();) {
    JobRecord* p = jobs_.Find(it->first);
    bool waits = std::any_of(preempt_.victims.begin(), preempt_.victims.end(), [&](const auto& v) {
      return v.second.preemptor == it->first && v.second.mode != "SUSPEND";
    });
    if (p && p->State() == JobState::kPending && waits) {
      ++it;
      continue;
    }
    if (p && p->State() == JobState::kPending && !StartJob(it->first, it->second.placement))
      Log("job " + std::to_string(it->first) + " does not fit its preempted place any more; "
          "left to the scheduler");
    it = preempt_.plans.erase(it);
  }
  // Suspended victims whose preemptor is over take their resources back.
  for (auto it = preempt_.victims.begin(); it != preempt_.victims.end();) {
    const PreemptState::Victim& v = it->second;
    JobRecord* p = jobs_.Find(v.preemptor);
    JobRecord* j = jobs_.Find(it->first);
    bool preemptor_on = Active(p) || (p && preempt_.plans.count(v.preemptor));
    if (v.mode != "SUSPEND" || preemptor_on || j->State() != JobState::kSuspended) {
      ++it;
      continue;
    }
    NodeRuntime* batch = nodes_.Find(j->alloc.front().node);
    if (!batch || !batch->link || !SchedBridge::StillFits(PlacementOf(*j), nodes_)) {
      ++it;  // not free yet (or the node is away): retried every second
      continue;
    }
    if (Status st = jobs_.MarkSuspended(it->first, false); !st.ok()) {
      ++it;
      continue;
    }
    nodes_.Allocate(*j);
    SendToNode(*batch, it->first, SIGCONT);
    Log("job " + std::to_string(it->first) + " resumed: its preemptor " +
        std::to_string(v.preemptor) + " is over");
    it = preempt_.victims.erase(it);
  }
}

void Controller::RecoverPreemptions() {
  int64_t now = clock_->Now();
  for (const auto& [id, j] : jobs_.jobs()) {
    bool suspended = j.State() == JobState::kSuspended;
    bool ending = j.State() == JobState::kRunning && (j.requeue_requested || j.preempt_kill_at);
    if (!suspended && !ending) continue;
    auto ev = store_->EventsForJob(id);
    if (!ev.ok()) continue;
    const JobEvent* last = nullptr;  // the preemption of the current run, if not undone
    for (const auto& e : *ev) {
      if (e.type == event::kStarted || e.type == event::kResumed) last = nullptr;
      if (e.type == event::kPreempted) last = &e;
    }
    if (!last) continue;
    boost::system::error_code ec;
    auto d = boost::json::parse(last->detail, ec);
    if (ec || !d.is_object()) continue;
    const auto& o = d.as_object();
    PreemptState::Victim v;
    v.preemptor = o.contains("by") ? o.at("by").to_number<uint64_t>() : 0;
    v.mode = o.contains("mode") ? std::string(o.at("mode").as_string()) : "";
    v.grace_time = o.contains("grace_time") ? o.at("grace_time").to_number<int64_t>() : 0;
    if (suspended != (v.mode == "SUSPEND")) continue;
    if (suspended) {
      nodes_.Release(j);  // lent again, as before the restart
    } else {
      // The durable grace deadline (older records: the event's time + grace time); a passed
      // one is due at the next tick.
      v.kill_at = j.preempt_kill_at ? j.preempt_kill_at
                                    : std::max<int64_t>(1, last->time + v.grace_time);
      if (v.kill_at > now)
        Log("job " + std::to_string(id) + ": its GraceTime runs on until " +
            std::to_string(v.kill_at) + " after the restart");
    }
    preempt_.victims[id] = v;
    Log("job " + std::to_string(id) + ": preemption (" + v.mode + ") for job " +
        std::to_string(v.preemptor) + " recovered from its events");
  }
}

void Controller::PreemptTick() {
  if (preempt_.victims.empty() && preempt_.plans.empty()) return;
  int64_t now = clock_->Now();
  std::vector<std::pair<uint64_t, PreemptState::Victim>> due;  // StopVictim may end jobs
  for (auto& [id, v] : preempt_.victims)
    if (v.kill_at != 0 && now >= v.kill_at) v.kill_at = 0, due.emplace_back(id, v);
  for (const auto& [id, v] : due) {
    JobRecord* j = jobs_.Find(id);
    if (!j || j->State() != JobState::kRunning) continue;
    Log("job " + std::to_string(id) + ": GraceTime over, cancelling it");
    StopVictim(*j, v, true);
  }
  AfterPreemptChange();
}

}  // namespace tessera::ctld
