#pragma once
// The controller's brain: jobs, nodes, scheduling and node events, tied together on the core
// thread. RPC services call these methods through Core::Call/Post; nothing here knows gRPC or
// protobuf (DESIGN §3).
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/cluster_config.h"
#include "ctld/accounts/assoc_manager.h"
#include "ctld/core.h"
#include "ctld/jobs/job_manager.h"
#include "ctld/nodes/node_table.h"
#include "ctld/preemption.h"
#include "ctld/reservations.h"
#include "ctld/sched_bridge.h"
#include "ctld/sched_bridge_mig.h"
#include "ctld/step_gpus.h"
#include "ctld/step_layout.h"
#include "ctld/state/store.h"
#include "ctld/topology_live.h"
#include "ctld/usage.h"
#include "ctld/sched/assoc.h"
#include "ctld/sched/priority.h"

namespace tessera::ctld {

namespace metrics {
class CtldMetrics;  // ctld/metrics/ctld_metrics.h
}

struct RegisterInfo {
  std::string node;
  uint32_t cpus = 0;
  uint64_t mem_mib = 0;
  std::vector<GpuState> gpus;
  std::vector<HcaState> hcas;
  std::vector<uint64_t> running;
  std::map<uint64_t, uint64_t> runs;  // running job -> its run there (absent: unknown, old noded)
  struct Finished {
    uint64_t job_id;
    JobState state;
    int32_t exit_code, exit_signal;
    int64_t end_time;
    std::string message;
    uint64_t run = 0;  // the run that ended; 0 = unknown (old noded)
    std::string batch_usage;  // issue 19: serialized tessera.v1.StepUsage of .batch; "" = none
  };
  std::vector<Finished> finished;
  std::string os, arch;  // issue 19: the host's uname ("" = not reported)
  int64_t boot_time = 0;
  std::string boot_id;  // /proc/sys/kernel/random/boot_id of the host ("" = not sent)
  std::string version;
};

// A node's report of run `reported` belongs to the job's run `current`; 0 on either side is
// unknown (an older noded, or a record written before runs): matched by node only, as before.
inline bool SameRun(uint64_t reported, uint64_t current) {
  return reported == 0 || current == 0 || reported == current;
}

struct RegisterReply {
  int64_t heartbeat_interval_s = 10;
  std::vector<uint64_t> kill_jobs;
  std::vector<GpuDrainRow> gpu_drains;  // every GPU of the node ctld holds drained (issue 14)
};

struct CtldStats {
  int64_t start_time = 0;
  uint64_t cycles = 0;
  int64_t last_cycle_us = 0;
  int64_t last_cycle_cpu_us = 0;  // the core thread's CPU time in the last cycle
  int64_t max_cycle_us = 0;
  int64_t total_cycle_us = 0;
  uint64_t jobs_submitted = 0;
  uint64_t jobs_started = 0;
  uint64_t jobs_completed = 0;
  uint64_t jobs_cancelled = 0;
  uint64_t jobs_failed = 0;
  uint64_t jobs_backfilled = 0;
  // Issue 20 §3 (sdiag, h20a). A reset (ResetStats) zeroes all but the *_since_start figures.
  uint64_t jobs_backfilled_since_start = 0;
  uint64_t depth_total = 0;           // CycleResult::allocate_depth, summed over cycles
  uint64_t last_queue_length = 0;     // pending jobs in the last cycle
  uint64_t bf_cycles = 0;
  int64_t bf_last_when = 0;           // epoch s
  int64_t bf_last_us = 0, bf_max_us = 0, bf_total_us = 0;
  uint64_t bf_last_depth = 0, bf_last_depth_try = 0, bf_last_queue = 0, bf_last_reserved = 0;
  uint64_t bf_depth_total = 0, bf_depth_try_total = 0, bf_queue_total = 0;
};

// Issue 20 §2 (h20a): sinfo's default rows, made by ctld (Controller::StateSummary).
struct NodeStateGroup {
  std::string partition;
  std::string state;       // NodeRuntime::StateName()
  uint32_t count = 0;
  std::string nodes;       // sorted as people expect (SortHostNames), hostlist-compressed
};

class Controller {
 public:
  Controller(std::shared_ptr<const ClusterConfig> cfg, std::shared_ptr<const sched::SchedConfig> sched_cfg,
             Store* store, const Clock* clock, Core* core);

  // Recovers state from the store and starts timers. Core thread.
  Status Start(const Recovered& rec);

  const ClusterConfig& config() const { return *cfg_; }
  std::shared_ptr<const ClusterConfig> config_ptr() const { return cfg_; }
  // Thread-safe: the current configuration, for RPC threads (authorization).
  std::shared_ptr<const ClusterConfig> SharedConfig() const {
    std::lock_guard<std::mutex> l(shared_mu_);
    return shared_cfg_;
  }
  JobManager& jobs() { return jobs_; }
  NodeTable& nodes() { return nodes_; }
  const CtldStats& stats() const { return stats_; }
  // Issue 20 §3 (sdiag --reset): counters and cycle figures start again from now.
  void ResetStats();
  // Issue 20 §2 (h20a): one row per (partition, node state) in sinfo's order (partitions in
  // config order, states MIXED, ALLOCATED, IDLE, DRAINING, DRAINED, DOWN, other; a partition
  // without nodes has no row). Cached (controller_stats.cc): rebuilt only when some node's
  // state or the configuration changed since the last call (the generation then moves on).
  const std::vector<NodeStateGroup>& StateSummary(uint64_t* generation);
  // Issue 20 §3: counters and histograms into `m` (null = none; not owned). Core thread.
  void SetMetrics(metrics::CtldMetrics* m) { metrics_ = m; }
  // The topology of the current config (issue 15; ctld/topology_live.h). Core thread.
  const LiveTopology& topology() const { return *topology_; }

  // --- users ---
  // Validates a request into a job record (not yet submitted). `as_uid` is spec.uid.
  Result<JobRecord> PrepareSubmit(JobSpec spec, const Caller& caller, uint32_t as_uid,
                                  const std::string& submit_host);
  void Submit(JobRecord draft, std::function<void(Result<uint64_t>)> done);
  // tbatch --test-only: where and when `draft` would start if submitted now.
  struct WhatIf {
    int64_t start_time = 0;  // 0 unknown
    std::string nodes;
    std::string partition;
    uint32_t cpus = 0;
  };
  WhatIf WouldStart(const JobRecord& draft);
  // Cancel (signal 0) is durable before it is acknowledged or sent to a node: on a failed
  // commit the job is unchanged and the store's error is returned. CancelMany commits all its
  // cancels in one transaction and answers per id (in order). A signal changes no state.
  Status Cancel(uint64_t id, const Caller& c, int signal);
  std::vector<Status> CancelMany(const std::vector<uint64_t>& ids, const Caller& c, int signal);
  Status Requeue(uint64_t id, const Caller& c);
  // Admins: stop (SIGSTOP) or continue (SIGCONT) a running job's processes.
  Status Suspend(uint64_t id, const Caller& c, bool suspend);
  // Field updates; a new partition must exist and admit the job's time limit.
  Status UpdateJob(uint64_t id, const Caller& c, const JobUpdate& u);
  // Drain/down/resume; the node state is stored (node_state) before it changes in memory.
  // `uid`: the caller, recorded as who set the reason (sinfo -R USER); -1 unknown.
  Status UpdateNode(const std::string& name, const std::string& action, const std::string& reason,
                    int64_t uid = -1);
  // Per-GPU drain/resume (admins; controller_gpus.cc, issue 14): `action` DRAIN (reason
  // required) or RESUME of GPU `gpu` on every node of `expr`. Durable (gpu_drain) before memory
  // changes, then told to each connected node (GpuDrain). Refused, changing nothing: an unknown
  // node, a node without that GPU index (configured or reported), a RESUME on a node that is
  // not connected (it would report its own drained flag again at registration).
  Status UpdateGpu(const std::string& expr, uint32_t gpu, const std::string& action,
                   const std::string& reason, int64_t uid = -1);  // uid: who (issue 21)
  // trun: lays a step out over a running job's nodes, grants it to those nodes, records it.
  struct StepReply {
    uint32_t step_id = 0;
    std::vector<StepPlacement> layout;
    std::vector<const NodeConfig*> nodes;  // same order as layout
    uint32_t ntasks = 0;
    std::string nodelist, master_addr;
    uint32_t master_port = 0;
  };
  Result<StepReply> CreateStep(uint64_t job_id, const Caller& c, const StepRequest& req, const std::string& name);
  // `usage`: the step's serialized tessera.v1.StepUsage (issue 19), "" = none.
  Status CompleteStep(uint64_t job_id, uint32_t step_id, const Caller& c, JobState state,
                      int32_t exit_code, int32_t exit_signal, std::string usage = "");

  // Swaps in a new, already validated configuration.
  void Reconfigure(std::shared_ptr<const ClusterConfig> cfg, std::shared_ptr<const sched::SchedConfig> sched_cfg);

  // --- node daemons ---
  // Refused (ALREADY_EXISTS) while the node has a live stream that is still responding (a
  // heartbeat within SlurmdTimeout): a node's identity is more than its name. A node silent for
  // SlurmdTimeout counts as gone: the new registration replaces its stream. A registration with
  // another boot id than the node's previous one means the host rebooted: every job ctld thought
  // ran there is lost (NODE_FAIL, or requeued when --requeue) and whatever it reports running is
  // killed. Reports of another run than a job's current one are recorded, never applied.
  Result<RegisterReply> OnRegister(const RegisterInfo& info, std::shared_ptr<NodeLink> link);
  // `runs`: running job -> run, as the node reports it (absent = unknown).
  void OnHeartbeat(const std::string& node, const std::vector<uint64_t>& running,
                   const std::map<uint64_t, uint64_t>& runs = {});
  // Issue 19: a heartbeat's load and free memory (scontrol show node CPULoad=, FreeMem=).
  void OnNodeLoad(const std::string& node, int32_t cpu_load_x100, uint64_t free_mem_mib);
  // A report of another run than the job's current one (or from another node) is recorded as an
  // event::kStaleReport and acknowledged; it never ends the current run.
  void OnJobFinished(const std::string& node, const RegisterInfo::Finished& f);
  void OnDisconnect(const std::string& node, const NodeLink* link);
  // A GPU's health or layout changed (XID, lost device, MIG change): the GPU alone is drained
  // (durably, gpu_drain, until an admin resumes it); the node keeps running other work. An XID
  // or lost device under running jobs applies their GpuFailurePolicy (OnGpuFailure).
  void OnGpuUpdate(const std::string& node, const GpuState& gpu, uint32_t xid);
  // Admins: change a GPU's MIG layout on a node; `done` gets the GPU after the node answered.
  using MigDone = std::function<void(Result<GpuState>)>;
  void ConfigureMig(const std::string& node, uint32_t gpu, bool destroy_all,
                    std::vector<std::string> destroy,
                    const std::vector<NodeLink::MigPlacementReq>& create, MigDone done);
  void OnMigConfigured(uint64_t request_id, const Status& st, const GpuState& gpu);

  // Asks for a scheduling cycle soon (coalesced).
  void RequestSchedule();

  // --- associations (controller_accounts.cc, issue 16 §1; contract in accounts/assoc_manager.h)
  // tacctmgr add/modify/delete (admins; the RPC checks): durable before it returns, then live
  // (the scheduler and submit checks see it at once). dry_run: validated, nothing written.
  Result<accounts::AssocManager::Changed> ChangeAssoc(const accounts::AssocRequest& r,
                                                      bool dry_run);
  Result<std::vector<accounts::ShowRow>> ShowAssoc(const accounts::AssocRequest& r) const;
  // --- fair share (controller_usage.cc, issue 16 §3) ---
  // The association tree with usage charged up to now (tshare).
  std::vector<sched::ShareRow> Shares();
  // Queues (issue 16 §2, h16q) as of the last cycle (CycleResult::queues); empty when inactive.
  const std::vector<sched::QueueShare>& QueueShares() const { return queue_shares_; }
  // Every pending, not held job's priority factors as the scheduler computes them (tprio).
  struct PriorityRow {
    uint64_t job_id = 0;
    std::string partition, user, account, qos;
    sched::PriorityFactors factors;
    double fairshare = 0;  // the unweighted factor
  };
  std::vector<PriorityRow> Priorities();
  const sched::SchedConfig& sched_config() const { return *sched_cfg_; }
  // --- reservations (controller_reservations.cc, issue 17 §1; contract in reservations.h) ---
  // scontrol create/update reservation keys (times as epoch seconds); durable before they
  // return, then live for the next cycle and for submissions. Admins (the RPC checks).
  Result<sched::ReservationSnap> CreateReservation(const sched::ResvKeyValues& kv);
  Result<sched::ReservationSnap> UpdateReservation(const sched::ResvKeyValues& kv);
  // Refused while a job runs in it ("Reservation busy").
  Status DeleteReservation(const std::string& name);
  const std::vector<sched::ReservationSnap>& Reservations() const;

 private:
  // --- reservations (controller_reservations.cc) ---
  void StartReservations(const Recovered& rec);
  // The cluster as a reservation request is checked against (nodes, partitions, running).
  sched::ClusterSnapshot ResvCluster(int64_t now);
  void ExpireReservations();  // from Tick
  std::unique_ptr<ReservationTable> resv_;
  void RunCycle();
  void CheckNodes();
  // Issue 21: the reasons the controller sets itself (a node not responding, a GPU count
  // drain) carry its own uid as who set them (sinfo -R USER: slurmctld's SlurmUser) and their
  // time, durable like an administrator's.
  const int64_t self_uid_ = static_cast<int64_t>(::geteuid());
  // Writes the node's drain/down flags and reason as they are now, in the background (nothing
  // waits on it; a lost write costs only a controller-set reason's who and when).
  void RecordNodeState(const NodeRuntime& n);
  void FailNodeJobs(NodeRuntime& n, const std::string& why);
  Status SignalJob(uint64_t id, const Caller& c, int signal);
  // After a durable cancel_requested: signal the job's node, or end the job if it is away.
  void StopCancelledJob(uint64_t id);
  // A start whose commit failed: release its nodes and put `before` (the pending record) back.
  void UndoStart(const JobRecord& before);
  // An end whose commit failed: put `before` back (and its allocation, if it ran).
  void UndoFinish(const JobRecord& before, bool was_running);
  // Sends `signal` (0 = cancel) for job `id` to its node (`n.link` set), or, while the job's
  // launch waits for its durable start, queues it to follow the launch: a signal that reached
  // the node before the launch would be dropped there and the job would run on.
  void SendToNode(NodeRuntime& n, uint64_t id, int signal);
  // OnRegister's parts: may this registration replace the node's current stream; which jobs
  // the node lost (or runs without us) - `rebooted`: all of them.
  Status CheckRegistration(const NodeRuntime& n, const RegisterInfo& info) const;
  void ReconcileRegisteredJobs(const RegisterInfo& info, bool rebooted, RegisterReply* reply);
  void FinishJob(JobRecord& j, JobState state, int32_t code, int32_t sig, int64_t end,
                 const std::string& msg, std::function<void()> after_durable);
  void Tick();
  // --- fair share (controller_usage.cc) ---
  void LoadUsage(const Recovered& rec);
  void ChargeUsage();  // charges running jobs up to now; writes the changed rows
  UsageLedger usage_;
  int64_t last_usage_tick_ = 0;
  // --- GPUs (controller_gpus.cc, gpu_failures.cc; issue 14) ---
  // Puts ctld's durable drains over the GPUs the node reported (healthy=false, the reason).
  void ApplyGpuDrains(NodeRuntime& n);
  // Records (durably, in the background) a drain of GPU `g` the node reported unhealthy.
  void RecordReportedDrain(const std::string& node, const GpuState& g);
  // At registration: reported-unhealthy GPUs become durable drains; the GPU count is checked
  // against gres.conf (drain "gres/gpu count reported lower than configured (N < M)", cleared by
  // a later registration with the right count only when ctld set it); reply carries the drains.
  // Returns the GPU failures this registration reveals (RegisteredGpuFailures) for OnGpuFailure
  // once the registration's jobs are reconciled.
  std::vector<GpuState> CheckRegisteredGpus(NodeRuntime& n, RegisterReply* reply,
                                            const std::vector<GpuState>& before);
  void CheckGpuCount(NodeRuntime& n);
  // A GPU failed (XID not ignored by the node, or lost) under running jobs: applies each job's
  // partition GpuFailurePolicy (gpu_failures.cc).
  void OnGpuFailure(NodeRuntime& n, const GpuState& gpu, uint32_t xid);
  // The reason a job stopped for a GPU failure ends with (fail) or is requeued with (requeue),
  // consumed when its node reports the end (OnJobFinished). Memory only: after a restart the
  // durable requeue_requested still requeues it, with the generic reason.
  std::string TakeGpuFailureEnd(uint64_t id, bool* fail);

  // --- associations (controller_accounts.cc)
  Status StartAccounts(const Recovered& rec);
  // sched_cfg_ = the store's associations over base_sched_cfg_ (after Reconfigure / a change).
  void ApplyAccounts();
  // A job without --account gets the user's DefaultAccount, without --qos the association's
  // default QoS, without --time the association's MaxWall when that is shorter.
  void ApplyAssocDefaults(JobRecord& r, bool time_given) const;
  // Submit limits of associations need every active job counted (not only the caller's).
  bool AssocSubmitLimits() const;
  // The association index of the current sched_cfg_, built once per config (not per submit).
  struct LiveAssocs {
    explicit LiveAssocs(std::shared_ptr<const sched::SchedConfig> c);
    std::shared_ptr<const sched::SchedConfig> cfg;  // kept alive for idx
    sched::AssocIndex idx;
    bool submit_limits = false;  // an association has MaxSubmitJobs/GrpSubmitJobs (enforced)
  };
  const LiveAssocs& Assocs() const;
  mutable std::unique_ptr<LiveAssocs> assocs_;  // core thread; rebuilt when sched_cfg_ changes
  // Starts pending job `id` on `placement` if it still fits the live tables (durable start,
  // then launch). False when it no longer can.
  bool StartJob(uint64_t id, const std::vector<sched::NodePlacement>& placement);
  // --- preemption (preemption.h/.cc; issue 16 §4) ---
  void AdjustPreemptSnapshot(sched::ClusterSnapshot& snap) const;
  void ApplyPreemptions(const std::vector<sched::Preemption>& ps);
  bool ApplyPreemption(const sched::Preemption& p);
  // Freezes (SUSPEND), SIGTERMs (grace time starts) or cancels (cancel_now, or no grace) `v`.
  void StopVictim(JobRecord& v, const PreemptState::Victim& pv, bool cancel_now);
  // A victim's run ended (OnJobFinished): the state it ends with (PREEMPTED for CANCEL).
  JobState PreemptedEndState(uint64_t id, JobState state);
  // After a victim ended or a preemptor ended: start waiting preemptors, resume victims.
  void AfterPreemptChange();
  void PreemptTick();
  // At start: suspended victims (and REQUEUE victims still running) from their `preempted`
  // events, so they are resumed (cancelled) as before the restart.
  void RecoverPreemptions();
  PreemptState preempt_;

  std::shared_ptr<const ClusterConfig> cfg_;
  std::shared_ptr<const sched::SchedConfig> sched_cfg_;
  std::shared_ptr<const sched::SchedConfig> base_sched_cfg_;  // tessera.conf's, before the store
  std::unique_ptr<accounts::AssocManager> accounts_;
  std::shared_ptr<const LiveTopology> topology_;  // rebuilt with cfg_
  mutable std::mutex shared_mu_;
  std::shared_ptr<const ClusterConfig> shared_cfg_;
  struct CachedUser {
    std::string name;
    uint32_t gid = 0;
    int64_t fetched = 0;
  };
  std::map<uint32_t, CachedUser> users_;  // uid -> passwd entry, refreshed every 5 minutes
  sched::Registry registry_ = sched::Registry::Builtin();
  Store* store_;
  const Clock* clock_;
  Core* core_;
  JobManager jobs_;
  NodeTable nodes_;
  CtldStats stats_;
  void RecordCycleDepth(const sched::CycleResult& r, int64_t now);  // sdiag (issue 20 §3)
  struct SummaryCache {  // StateSummary's
    std::shared_ptr<const ClusterConfig> cfg;  // the config it was made for
    std::vector<uint8_t> states;  // per node, config order
    std::vector<NodeStateGroup> groups;
    uint64_t generation = 0;
  } summary_;
  metrics::CtldMetrics* metrics_ = nullptr;  // issue 20 §3
  // Jobs started whose launch is not sent yet (start not durable yet) -> signals to send after it.
  std::map<uint64_t, std::vector<int>> awaiting_launch_;
  std::map<std::pair<uint64_t, uint32_t>, StepRecord> steps_;  // running steps
  // gpunode: GPUs running steps asked for (step_gpus.h), by step then node.
  std::map<std::pair<uint64_t, uint32_t>, std::map<std::string, StepGpus>> step_gpus_;
  Result<std::vector<StepGpus>> PickGpusForStep(const JobRecord& j, const StepRequest& req,
                                                const std::vector<StepPlacement>& layout);
  std::map<uint64_t, MigDone> mig_requests_;
  std::map<std::pair<std::string, uint32_t>, GpuDrainRow> gpu_drains_;  // (node, index) -> row
  struct GpuFailureEnd {
    bool fail = false;     // end FAILED with `message` (else requeue with it as reason)
    std::string message;
  };
  std::map<uint64_t, GpuFailureEnd> gpu_failure_ends_;
  // Dynamic MIG (controller_mig.cc): reconfigurations the scheduler chose, sent and unanswered.
  MigInFlight mig_in_flight_;
  void ApplyMigReconfigs(const std::vector<sched::MigReconfig>& reconfigs);
  uint64_t next_mig_request_ = 1;
  bool cycle_requested_ = false;
  int64_t last_timer_cycle_ = 0;
  int64_t last_cycle_end_us_ = 0;
  std::vector<sched::QueueShare> queue_shares_;  // issue 16 §2 (h16q): the last cycle's
  bool last_cycle_acted_ = false;  // the last cycle started or preempted jobs (Tick)
  std::vector<std::string> cycle_warnings_;  // issue 16 §2 (h16): logged when they change
  bool logged_cycle_error_ = false;
  boost::asio::steady_timer cycle_timer_;
  boost::asio::steady_timer tick_timer_;
};

}  // namespace tessera::ctld
