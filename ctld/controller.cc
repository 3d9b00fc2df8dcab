#include "ctld/controller.h"

#include <malloc.h>
#include <pwd.h>

#include <csignal>

#include <algorithm>
#include <iostream>

#include "common/array_spec.h"
#include "common/env_block.h"
#include "common/hostlist.h"
#include "ctld/log.h"
#include "ctld/metrics/ctld_metrics.h"
#include "ctld/mig_requests.h"
#include "ctld/part_limits.h"
#include "ctld/submit_checks.h"

namespace tessera::ctld {

namespace {
// The configured cluster, empty, as the submit check sees it: built once per configuration and
// topology instead of once per submission (at 10,000 nodes the build was several ms of every
// submission: issue 20 §2). Keyed by the live objects themselves (weak pointers: a freed
// configuration never matches), one cache per core thread.
const sched::ClusterSnapshot& EmptyClusterOf(const std::shared_ptr<const ClusterConfig>& cfg,
                                             const SchedBridge::TopologyPtr& topology) {
  thread_local std::weak_ptr<const ClusterConfig> cfg_key;
  thread_local std::weak_ptr<const sched::TopologySnap> topo_key;
  thread_local bool flat = false;
  thread_local std::unique_ptr<sched::ClusterSnapshot> cached;
  bool same = cached && cfg_key.lock() == cfg &&
              (topology ? topo_key.lock() == topology : flat);
  if (!same) {
    cached = std::make_unique<sched::ClusterSnapshot>(SchedBridge::EmptyCluster(*cfg, topology));
    cfg_key = cfg;
    topo_key = topology;
    flat = topology == nullptr;
  }
  return *cached;
}

constexpr size_t kMaxScriptBytes = 4 << 20;
constexpr size_t kMaxEnvBytes = 16 << 20;
constexpr uint32_t kMaxTasks = 1'000'000;
constexpr int64_t kMinCycleGapUs = 10000;

}  // namespace

Controller::Controller(std::shared_ptr<const ClusterConfig> cfg,
                       std::shared_ptr<const sched::SchedConfig> sched_cfg, Store* store,
                       const Clock* clock, Core* core)
    : cfg_(std::move(cfg)), sched_cfg_(std::move(sched_cfg)), store_(store), clock_(clock),
      core_(core), jobs_(store, clock), nodes_(*cfg_), cycle_timer_(core->io()),
      tick_timer_(core->io()) {
  shared_cfg_ = cfg_;
  topology_ = BuildLiveTopology(*cfg_);  // issue 15: once per config
  resv_ = std::make_unique<ReservationTable>(store);  // issue 17 §1: loaded by Start
}

Status Controller::Start(const Recovered& rec) {
  TESSERA_RETURN_IF_ERROR(StartAccounts(rec));  // the association store (issue 16)
  StartReservations(rec);                        // issue 17 §1
  // Jobs that finished less than MinJobAge ago are listed (tqueue -t all) as before the restart.
  // An unreadable accounting row costs only its listing here (tacct still reads the table).
  auto recent = store_->RecentlyFinished(clock_->Now() - cfg_->min_job_age_s);
  if (!recent.ok()) Log("finished jobs not listed after the restart: " + recent.status().message());
  jobs_.Recover(rec, recent.ok() ? std::move(*recent) : std::vector<JobRecord>{});
  for (const auto& row : rec.nodes) {  // administrators' drain/down, as acknowledged
    NodeRuntime* n = nodes_.Find(row.name);
    if (!n) continue;  // no longer configured
    if (row.drain) n->drain = true;
    if (row.down) n->base = NodeBase::kDown;
    if (row.drain || row.down) {
      n->reason = row.reason;
      n->reason_time = row.reason_time;
      n->reason_uid = row.reason_uid;
    }
  }
  for (const auto& row : rec.gpu_drains) gpu_drains_[{row.node, row.gpu}] = row;
  LoadUsage(rec);  // fair share (issue 16 §3)
  stats_.start_time = clock_->Now();
  for (auto& [name, n] : nodes_.nodes()) n.last_heartbeat = stats_.start_time;
  for (const auto& [id, j] : jobs_.jobs())
    if (j.State() == JobState::kRunning || j.State() == JobState::kSuspended) nodes_.Allocate(j);
  RecoverPreemptions();  // issue 16 §4 (preemption.cc)
  Tick();
  RequestSchedule();
  return Status::Ok();
}

// ---------------------------------------------------------------- users

Result<JobRecord> Controller::PrepareSubmit(JobSpec spec, const Caller& caller, uint32_t as_uid,
                                            const std::string& submit_host) {
  JobRecord r;
  r.uid = caller.uid;
  r.gid = caller.gid;
  if (as_uid != 0 && as_uid != caller.uid) {
    if (caller.uid != 0) return PermissionDenied("--uid requires root");
    r.uid = as_uid;
  }
  CachedUser& u = users_[r.uid];
  if (u.name.empty() || clock_->Now() - u.fetched > 300) {
    struct passwd pw, *res = nullptr;
    char buf[4096];
    if (getpwuid_r(r.uid, &pw, buf, sizeof buf, &res) != 0 || !res) {
      users_.erase(r.uid);
      return InvalidArgument("uid " + std::to_string(r.uid) + " is not a known user on the controller");
    }
    u = {pw.pw_name, pw.pw_gid, clock_->Now()};
  }
  r.user = u.name;
  if (r.uid != caller.uid) r.gid = u.gid;
  if (spec.script.empty() && spec.argv.empty()) return InvalidArgument("job has neither a script nor a command");
  if (spec.script.size() > kMaxScriptBytes) return InvalidArgument("script is larger than 4 MiB");
  if (spec.env_block.size() > kMaxEnvBytes) return InvalidArgument("environment is larger than 16 MiB");
  TESSERA_RETURN_IF_ERROR(ValidateEnvBlock(spec.env_block));
  if (spec.workdir.empty() || spec.workdir[0] != '/') return InvalidArgument("workdir must be an absolute path");
  TESSERA_RETURN_IF_ERROR(CheckDependencyTargets(
      spec.dependency, [this](uint64_t id) { return jobs_.jobs().count(id) > 0; }));
  if (spec.task_groups.empty()) return InvalidArgument("job has no task groups");
  uint64_t tasks = 0;
  for (auto& g : spec.task_groups) {
    if (g.count == 0) return InvalidArgument("task group \"" + g.name + "\" has count 0");
    if (g.per_task.cpus == 0) g.per_task.cpus = 1;
    tasks += g.count;
  }
  if (tasks > kMaxTasks) return InvalidArgument("too many tasks");
  if (!spec.array.empty()) {
    auto a = ParseArraySpec(spec.array);
    if (!a.ok()) return InvalidArgument("--array: " + a.status().message());
    if (a->indices.back() >= cfg_->max_array_size)
      return InvalidArgument("--array: index " + std::to_string(a->indices.back()) +
                             " is not below MaxArraySize=" + std::to_string(cfg_->max_array_size));
  }
  if (spec.nodes_max && spec.nodes_max < spec.nodes_min)
    return InvalidArgument("--nodes: maximum " + std::to_string(spec.nodes_max) + " is below minimum " + std::to_string(spec.nodes_min));
  if (spec.nodes_min > tasks)
    return InvalidArgument("requested " + std::to_string(spec.nodes_min) + " nodes for only " + std::to_string(tasks) + " tasks");
  for (const auto* expr : {&spec.nodelist, &spec.exclude}) {
    auto h = ExpandHostlist(*expr);
    if (!h.ok()) return InvalidArgument("invalid node list: " + h.status().message());
    for (const auto& name : *h)  // Slurm refuses unknown names in -w and -x (issue 19)
      if (!cfg_->FindNode(name)) return InvalidArgument("Invalid node name specified: " + name);
  }
  const PartitionConfig* part = spec.partition.empty() ? cfg_->DefaultPartition() : cfg_->FindPartition(spec.partition);
  if (!part) return InvalidArgument("Invalid partition name specified: " + spec.partition);
  r.partition = part->name;
  TESSERA_RETURN_IF_ERROR(CheckSegmentRequest(*topology_, spec, *part));  // issue 15
  int64_t limit = spec.time_limit_s;
  if (limit == 0) limit = part->default_time_s >= 0 ? part->default_time_s : part->max_time_s;
  // EnforcePartLimits=NO (Slurm's default): accepted, it waits with PartitionTimeLimit.
  if (OverPartitionTime(*part, limit) && cfg_->enforce_part_limits != "NO")
    return InvalidArgument("Requested time limit is invalid (exceeds MaxTime of partition " + part->name + ")");
  r.time_limit_s = limit;
  r.submit_host = submit_host;
  r.spec = std::move(spec);
  ApplyAssocDefaults(r, r.spec.time_limit_s != 0);  // issue 16: DefaultAccount, default QoS
  // Issue 21 §4: the job records the QoS it gets (tqueue %q, show job QOS=, tacct), as slurmctld
  // does: the default QoS (Default=yes, else "normal"; "normal" when no QoS is configured). Left
  // empty when QoS lines exist and none is the default: CheckSubmit refuses the job then.
  if (r.spec.qos.empty() && (sched_cfg_->qos.empty() || sched_cfg_->FindQos("")))
    r.spec.qos = sched_cfg_->default_qos;
  sched::JobSnap snap = SchedBridge::ToSnap(r);
  if (NeedsMigCheck(snap)) TESSERA_RETURN_IF_ERROR(CheckMigSatisfiable(*cfg_, nodes_, snap));
  else TESSERA_RETURN_IF_ERROR(sched::CheckSatisfiable(snap, EmptyClusterOf(cfg_, topology_->snap)));
  // Submit limits count the user's active jobs; only build that view when a limit needs it.
  sched::ClusterSnapshot mine;
  bool counts = std::any_of(sched_cfg_->qos.begin(), sched_cfg_->qos.end(),
                            [](const auto& q) { return q.second.max_submit_jobs_per_user >= 0; });
  bool all_users = AssocSubmitLimits();  // association submit limits count every user's jobs
  if (counts || all_users) {
    for (const JobRecord* jp : jobs_.active()) {
      const JobRecord& j = *jp;
      if ((!all_users && j.uid != r.uid) || IsFinished(j.State())) continue;
      if (j.State() == JobState::kPending) {
        sched::JobSnap p;  // what the submit limits count: user, QoS, account
        p.id = j.job_id;
        p.user = j.user;
        p.qos = j.spec.qos;
        p.account = j.spec.account;
        mine.pending.push_back(std::move(p));
      } else {
        sched::RunningSnap snap;
        snap.id = j.job_id;
        snap.user = j.user;
        snap.qos = j.spec.qos;
        snap.account = j.spec.account;
        mine.running.push_back(std::move(snap));
      }
    }
  }
  mine.reservations = resv_->all();  // issue 17 §1: --reservation exists, caller may use it
  TESSERA_RETURN_IF_ERROR(sched::CheckSubmit(snap, mine, *sched_cfg_, &Assocs().idx));
  return r;
}

void Controller::Submit(JobRecord draft, std::function<void(Result<uint64_t>)> done) {
  stats_.jobs_submitted++;
  if (metrics_) metrics_->JobSubmitted(draft.partition);
  bool held = draft.spec.hold;  // a held job cannot start and is not in snapshots: no cycle for it
  jobs_.Submit(std::move(draft),
               [this, held, done = std::move(done)](Result<uint64_t> r) {
                 if (r.ok() && !held) RequestSchedule();
                 done(std::move(r));
               },
               [this](std::function<void()> f) { core_->Post(std::move(f)); });
}

Controller::WhatIf Controller::WouldStart(const JobRecord& draft) {
  int64_t now = clock_->Now();
  auto snap = SchedBridge::Snapshot(*cfg_, jobs_.jobs(), jobs_.active(), nodes_, now,
                                    [this](uint64_t id) { return jobs_.IsDurable(id); },
                                    topology_->snap);
  snap.reservations = resv_->all();  // issue 17 §1
  sched::JobSnap probe = SchedBridge::ToSnap(draft);
  probe.id = UINT64_MAX;  // never a real job id
  probe.submit_time = now;
  probe.eligible_time = now;
  snap.pending.push_back(probe);
  auto result = sched::RunCycle(snap, *sched_cfg_, registry_);
  WhatIf w;
  w.partition = draft.partition;
  for (const auto& d : result.decisions) {
    if (d.job_id != UINT64_MAX) continue;
    std::vector<std::string> names;
    if (d.kind == sched::Decision::Kind::kStart) {
      w.start_time = now;
      for (const auto& p : d.placement) {
        names.push_back(p.node);
        w.cpus += p.cpus;
      }
    } else {
      w.start_time = d.expected_start;
      names = d.reserved_nodes;
    }
    w.nodes = CompressHostlist(names);
  }
  return w;
}

Status Controller::Cancel(uint64_t id, const Caller& c, int signal) {
  return CancelMany({id}, c, signal).front();
}

Status Controller::Requeue(uint64_t id, const Caller& c) {
  JobRecord* j = jobs_.Find(id);
  if (!j) return NotFound("Invalid job id specified: " + std::to_string(id));
  if (!c.MayControl(*j)) return PermissionDenied("Access/permission denied");
  if (j->State() != JobState::kRunning) return FailedPrecondition("Job " + std::to_string(id) + " is not running; only running jobs can be requeued");
  // Durable before acknowledged: a restarted controller still requeues the job when it ends.
  if (!j->requeue_requested)
    TESSERA_RETURN_IF_ERROR(jobs_.CommitTransitions({{id, event::kRequeueRequested, "{}"}}));
  NodeRuntime* n = nodes_.Find(j->alloc.front().node);
  if (n && n->link) {
    SendToNode(*n, id, 0);
  } else if (!MayStillRun(n)) {  // nothing runs there any more: requeue now
    nodes_.Release(*j);
    jobs_.MarkRequeued(id, "Requeued by user", nullptr);
    RequestSchedule();
  }  // else: requeued when the node reports the run's end (ReconcileRegisteredJobs kills it)
  return Status::Ok();
}

Status Controller::Suspend(uint64_t id, const Caller& c, bool suspend) {
  JobRecord* j = jobs_.Find(id);
  if (!j) return NotFound("Invalid job id specified: " + std::to_string(id));
  if (!c.admin) return PermissionDenied("only administrators may suspend or resume jobs");
  JobState want = suspend ? JobState::kRunning : JobState::kSuspended;
  if (j->State() != want)
    return FailedPrecondition("Job " + std::to_string(id) + (suspend ? " is not running" : " is not suspended"));
  NodeRuntime* n = nodes_.Find(j->alloc.front().node);
  if (!n || !n->link) return Unavailable("node " + j->alloc.front().node + " is not connected");
  TESSERA_RETURN_IF_ERROR(jobs_.MarkSuspended(id, suspend));  // durable first
  SendToNode(*n, id, suspend ? SIGSTOP : SIGCONT);
  return Status::Ok();
}

Status Controller::UpdateJob(uint64_t id, const Caller& c, const JobUpdate& u) {
  TESSERA_RETURN_IF_ERROR(CheckUpdateInput(u, c));
  const JobRecord* j = jobs_.Find(id);
  if (j && !u.partition.empty()) {
    const PartitionConfig* p = cfg_->FindPartition(u.partition);
    if (!p) return InvalidArgument("Invalid partition name specified: " + u.partition);
    if (p->max_time_s >= 0 && (j->time_limit_s < 0 || j->time_limit_s > p->max_time_s))
      return InvalidArgument("the job's time limit exceeds MaxTime of partition " + p->name);
  }
  TESSERA_RETURN_IF_ERROR(jobs_.Update(id, c, u));
  RequestSchedule();
  return Status::Ok();
}

void Controller::Reconfigure(std::shared_ptr<const ClusterConfig> cfg,
                             std::shared_ptr<const sched::SchedConfig> sched_cfg) {
  cfg_ = std::move(cfg);
  sched_cfg_ = std::move(sched_cfg);
  ApplyAccounts();  // the association store over the new config (issue 16)
  topology_ = BuildLiveTopology(*cfg_);  // a changed topology.conf or node order
  {
    std::lock_guard<std::mutex> l(shared_mu_);
    shared_cfg_ = cfg_;
  }
  nodes_.Reconfigure(*cfg_);
  RequestSchedule();
}

// ---------------------------------------------------------------- node daemons

void Controller::OnJobFinished(const std::string& node, const RegisterInfo::Finished& f) {
  NodeRuntime* n = nodes_.Find(node);
  std::shared_ptr<NodeLink> link = n ? n->link : nullptr;
  uint64_t id = f.job_id, run = f.run;
  auto ack = [this, link, id, run] {
    core_->Post([link, id, run] {
      if (link) link->AckFinished(id, run);
    });
  };
  JobRecord* j = jobs_.Find(id);
  bool active = j && (j->State() == JobState::kRunning || j->State() == JobState::kSuspended);
  bool this_run = j && !j->alloc.empty() && j->alloc.front().node == node && SameRun(run, j->run);
  if (!active || !this_run) {
    // A stale report: of an earlier run (killed after a requeue), or from a node declared dead
    // before the job was requeued. Recorded when it is not a resend of the report that ended the
    // job; never applied.
    if (!j || this_run) return ack();
    Log("job " + std::to_string(id) + ": node " + node + " reported run " + std::to_string(run) +
        " " + JobStateName(f.state) + " while the job's run is " + std::to_string(j->run) +
        " on " + (j->alloc.empty() ? std::string("no node") : j->alloc.front().node) +
        "; recorded, not applied");
    jobs_.RecordStaleReport(
        id, StaleReportDetail(node, run, f.state, f.exit_code, f.exit_signal, f.message),
        [ack](const Status&) { ack(); });
    return;
  }
  if (!f.batch_usage.empty()) {  // issue 19: the .batch step's usage, for sacct
    StepRecord b;
    b.job_id = id;
    b.step_id = kBatchStepId;
    b.name = "batch";
    b.nodelist = node;
    b.ntasks = 1;
    b.ncpus = j->alloc.front().cpus;
    b.state = static_cast<int>(f.state);
    b.exit_code = f.exit_code;
    b.exit_signal = f.exit_signal;
    b.start_time = j->start_time;
    b.end_time = f.end_time;
    b.usage = f.batch_usage;
    jobs_.FinishStep(b);
  }
  bool gpu_fail = false;
  std::string gpu_why = TakeGpuFailureEnd(id, &gpu_fail);  // a GPU failure stopped it (issue 14)
  if (j->requeue_requested) {
    nodes_.Release(*j);
    bool preempted = preempt_.victims.count(id) > 0;  // issue 16 §4
    jobs_.MarkRequeued(id, !gpu_why.empty() ? gpu_why : preempted ? "Preempted" : "Requeued by user",
                       [ack](const Status&) { ack(); });
    if (preempted) AfterPreemptChange();
    RequestSchedule();
    return;
  }
  JobState state = PreemptedEndState(id, f.state);  // PREEMPTED for a CANCEL victim
  if (j->cancel_requested && (state == JobState::kFailed || state == JobState::kCompleted)) state = JobState::kCancelled;
  if (gpu_fail && !j->cancel_requested) {
    FinishJob(*j, JobState::kFailed, f.exit_code, f.exit_signal, f.end_time, gpu_why, ack);
    return;
  }
  FinishJob(*j, state, f.exit_code, f.exit_signal, f.end_time, f.message, ack);
}

void Controller::SendToNode(NodeRuntime& n, uint64_t id, int signal) {
  auto it = awaiting_launch_.find(id);
  if (it != awaiting_launch_.end()) {
    it->second.push_back(signal);
    return;
  }
  const JobRecord* j = jobs_.Find(id);
  n.link->Signal(id, signal, j ? j->run : 0);
}

void Controller::FinishJob(JobRecord& j, JobState state, int32_t code, int32_t sig, int64_t end,
                           const std::string& msg, std::function<void()> after_durable) {
  // Steps still running end with their job.
  for (auto it = steps_.lower_bound({j.job_id, 0}); it != steps_.end() && it->first.first == j.job_id;) {
    StepRecord s = it->second;
    s.state = static_cast<int>(state == JobState::kCompleted ? JobState::kCancelled : state);
    s.end_time = clock_->Now();
    jobs_.FinishStep(s);
    it = steps_.erase(it);
  }
  // The other nodes of the job hold only its trun steps: end them (noded drops their grants).
  for (size_t i = 1; i < j.alloc.size(); ++i) {
    NodeRuntime* other = nodes_.Find(j.alloc[i].node);
    if (other && other->link) other->link->Signal(j.job_id, 0, j.run);
  }
  if (state == JobState::kCompleted) stats_.jobs_completed++;
  else if (state == JobState::kCancelled) stats_.jobs_cancelled++;
  else stats_.jobs_failed++;
  if (metrics_) metrics_->JobFinished(j.partition, JobStateName(state));
  // An end that could not be recorded is undone in memory (the node resends its report, or
  // the job is found again at the next failure): memory never runs ahead of the disk.
  bool was_running = j.State() == JobState::kRunning || j.State() == JobState::kSuspended;
  nodes_.Release(j);
  jobs_.MarkFinished(j.job_id, state, code, sig, end, msg,
                     [this, after_durable, before = j, was_running](const Status& st) mutable {
                       if (!st.ok()) {
                         core_->Post([this, before = std::move(before), was_running] {
                           UndoFinish(before, was_running);
                         });
                         return;
                       }
                       if (after_durable) after_durable();
                     });
  if (!preempt_.victims.empty() || !preempt_.plans.empty()) AfterPreemptChange();  // issue 16 §4
  RequestSchedule();
}

// ---------------------------------------------------------------- scheduling

void Controller::RequestSchedule() {
  if (cycle_requested_) return;
  cycle_requested_ = true;
  // Pace event-triggered cycles: after a cycle that took T of CPU time, wait until 2T has passed
  // since it ended, so scheduling takes at most a third of the core thread under a storm of
  // events (CPU, not wall time: on a loaded machine a preempted cycle's wall time would stretch
  // the gaps while the nodes wait for work); and
  // at least kMinCycleGapUs, so a stream of job ends (each frees a slot) is handled by one cycle
  // per few jobs instead of one cycle (over every pending job) per job. An idle controller
  // still schedules at once.
  int64_t gap_us = std::max<int64_t>(kMinCycleGapUs, 2 * stats_.last_cycle_cpu_us);
  int64_t wait_us = std::max<int64_t>(0, last_cycle_end_us_ + gap_us - clock_->MonotonicMicros());
  auto run = [this] {
    cycle_requested_ = false;
    RunCycle();
  };
  if (wait_us < 1000) {
    core_->Post(run);
    return;
  }
  cycle_timer_.expires_after(std::chrono::microseconds(wait_us));
  cycle_timer_.async_wait([run](const boost::system::error_code& ec) {
    if (!ec) run();
  });
}

bool Controller::StartJob(uint64_t id, const std::vector<sched::NodePlacement>& placement) {
  JobRecord* j = jobs_.Find(id);
  if (!j || j->State() != JobState::kPending || j->held || !SchedBridge::StillFits(placement, nodes_)) return false;
  // Launch once the start is durable, so a restarted controller never forgets a launch. A
  // start that could not be recorded is undone in memory (the job pends again, as on disk).
  // Signals for the job (a cancel right after submission) wait until the launch is sent.
  awaiting_launch_[id].clear();
  jobs_.MarkStarted(id, SchedBridge::ToAlloc(placement, &nodes_), [this, id, before = *j](const Status& st) mutable {
    core_->Post([this, id, before = std::move(before), ok = st.ok()] {
      auto it = awaiting_launch_.find(id);
      if (it == awaiting_launch_.end()) return;
      std::vector<int> signals = std::move(it->second);
      awaiting_launch_.erase(it);
      if (!ok) {
        UndoStart(before);
        return;
      }
      JobRecord* job = jobs_.Find(id);
      if (!job || job->State() != JobState::kRunning) return;
      auto payload = store_->LoadPayload(id);
      if (!payload.ok()) {
        FinishJob(*job, JobState::kFailed, 1, 0, 0, "cannot launch: " + payload.status().message(), nullptr);
        return;
      }
      NodeRuntime* n = nodes_.Find(job->alloc.front().node);
      if (!n || !n->link) return;
      n->link->Launch(*job, *payload, cfg_->kill_wait_s);
      for (int sig : signals) n->link->Signal(id, sig, job->run);
    });
  });
  nodes_.Allocate(*j);
  stats_.jobs_started++;
  if (metrics_) metrics_->JobStarted(j->partition);
  return true;
}

void Controller::RunCycle() {
  int64_t t0 = clock_->MonotonicMicros();
  int64_t cpu0 = clock_->ThreadCpuMicros();
  int64_t now = clock_->Now();
  auto snap = SchedBridge::Snapshot(*cfg_, jobs_.jobs(), jobs_.active(), nodes_, now,
                                    [this](uint64_t id) { return jobs_.IsDurable(id); },
                                    topology_->snap);
  FillMigGpus(snap, *cfg_, nodes_, jobs_.active(), mig_in_flight_);
  AdjustPreemptSnapshot(snap);  // issue 16 §4 (preemption.cc)
  for (uint64_t id : HoldOverPartitionTime(*cfg_, snap))  // issue 19: EnforcePartLimits=NO
    jobs_.SetReason(id, "PartitionTimeLimit");
  snap.reservations = resv_->all();  // issue 17 §1
  if (sched_cfg_->weight_fairshare > 0) sched::FillFairshare(snap, *sched_cfg_, usage_.usage());
  auto result = sched::RunCycle(snap, *sched_cfg_, registry_,
                                [this] { return clock_->MonotonicMicros(); });
  stats_.jobs_backfilled += result.jobs_backfilled;
  RecordCycleDepth(result, now);  // issue 20 §3 (sdiag; controller_stats.cc)
  if (!result.status.ok() && !logged_cycle_error_) {
    Log("scheduling cycle failed: " + result.status.message());
    logged_cycle_error_ = true;
  }
  // A cycle that started, preempted or re-laid anything leaves figures of the cycle (tshare
  // --queues) one step behind: the next timer cycle runs even with nothing pending (Tick).
  last_cycle_acted_ = !result.preemptions.empty() || !result.mig_reconfigs.empty();
  for (const auto& d : result.decisions) {
    if (d.kind == sched::Decision::Kind::kPending) {
      jobs_.SetReason(d.job_id, d.reason, d.expected_start, d.reserved_nodes);
      continue;
    }
    StartJob(d.job_id, d.placement);
    last_cycle_acted_ = true;
  }
  ApplyMigReconfigs(result.mig_reconfigs);
  ApplyPreemptions(result.preemptions);  // issue 16 §4 (preemption.cc)
  queue_shares_ = std::move(result.queues);  // issue 16 §2 (tshare --queues)
  if (result.warnings != cycle_warnings_) {  // e.g. guarantees scaled down (queues.h)
    for (const auto& w : result.warnings) Log(w);
    cycle_warnings_ = std::move(result.warnings);
  }
  last_cycle_end_us_ = clock_->MonotonicMicros();
  int64_t us = last_cycle_end_us_ - t0;
  stats_.cycles++;
  stats_.last_cycle_us = us;
  stats_.last_cycle_cpu_us = clock_->ThreadCpuMicros() - cpu0;
  stats_.total_cycle_us += us;
  stats_.max_cycle_us = std::max(stats_.max_cycle_us, us);
  if (metrics_)  // issue 20 §3
    metrics_->Cycle(us, result.jobs_considered, result.jobs_started, result.jobs_backfilled);
}

void Controller::Tick() {
  CheckNodes();
  PreemptTick();  // issue 16 §4: grace times, resumes
  ExpireReservations();  // issue 17 §1
  jobs_.PurgeFinished(cfg_->min_job_age_s);
  // Scheduling cycles and RPC bursts free large transient buffers; give them back to the OS
  // so RSS tracks what the controller actually holds.
  malloc_trim(0);
  int64_t now = clock_->Now();
  if (now - last_usage_tick_ >= 5) {  // fair share: charge running jobs every 5 s
    last_usage_tick_ = now;
    ChargeUsage();
  }
  if (now - last_timer_cycle_ >= cfg_->sched_interval_s) {
    last_timer_cycle_ = now;
    // With nothing pending the periodic cycle could start nothing and only rebuilt the snapshot
    // of every node: ~1/4 of an idle 10,000-node controller's CPU (issue 20 §2). Events (a
    // submission, a release, a job's end, a node's return) still request cycles; a job waiting
    // for its begin time or a reservation is pending, so the timer still serves it.
    bool pending = false;
    for (const JobRecord* j : jobs_.active())
      if (j->State() == JobState::kPending) {
        pending = true;
        break;
      }
    if (pending || last_cycle_acted_) RequestSchedule();
  }
  tick_timer_.expires_after(std::chrono::seconds(1));
  tick_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) Tick();
  });
}

}  // namespace tessera::ctld
