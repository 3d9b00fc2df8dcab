#pragma once
// SchedConfig: the scheduler's part of tessera.conf, built from parsed ConfigLine records.
//
// Keys (slurm.conf syntax; case-insensitive):
//   SchedulerActions=enqueue,allocate,migplan,backfill      actions, run in this order
//   SchedulerPlugins=priority,gang,predicates,nodeorder,lifecycle,limits  (or fifo for priority)
//   SchedulerParameters=bf_reservation_depth=1,bf_window=1440,sched_score_window=16,
//                       binpack_weight=1,spread_weight=0,default_time=365-0,bf_max_times=2000,
//                       mig_reconfig_seconds=10,mig_plan_depth=64,endtime_weight=1,size_weight=1,
//                       scarce_weight=4
//   PriorityWeightAge= PriorityWeightFairshare= PriorityWeightJobSize= PriorityWeightPartition=
//   PriorityWeightQOS= PriorityMaxAge=7-0   PriorityFavorSmall=NO
//   PriorityWeightTimeLimit= PriorityTimeLimitMax=7-0   (Tessera, issue 17 §2: priority.h)
//   QOSName=normal Priority=10 MaxWall=1-0 MaxJobsPerUser=4 MaxSubmitJobsPerUser=100
//       MaxTRESPerUser=gres/gpu=8,cpu=64 GrpTRES=gres/gpu=32 GrpJobs=100 [Default=YES]
//       [TopologyMode=required|preferred]   (issue 15; overrides the partition's)
//   AccountName=physics Parent=root GrpTRES=gres/gpu=16 GrpJobs=50
//   PreemptType= PreemptMode= PreemptExemptTime=, PartitionName= PreemptMode= GraceTime=, QOSName=
//       Preempt= PreemptMode= GraceTime= PreemptExemptTime=, SchedulerParameters=preempt_depth=16
//       (issue 16 §4: preempt_config.h)
// Unknown SchedulerParameters options are warnings (Slurm has many); unknown action or plugin
// names are errors naming the name and the line. Every error is "file:line: message".
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "common/config_file.h"
#include "common/status.h"
#include "ctld/sched/preempt_config.h"

namespace tessera::sched {

// A TRES limit; -1 = unlimited in every field.
struct TresLimit {
  int64_t cpu = -1;
  int64_t mem_mib = -1;
  int64_t gpu = -1;
  int64_t node = -1;
  bool Unlimited() const { return cpu < 0 && mem_mib < 0 && gpu < 0 && node < 0; }
};

// Parses "cpu=64,mem=100G,node=4,gres/gpu=8" (gres/gpu:<model>= counts toward gpu).
Result<TresLimit> ParseTres(const std::string& s);

struct QosConfig {
  std::string name;
  int64_t priority = 0;
  int64_t max_wall = -1;                 // seconds
  int64_t max_jobs_per_user = -1;        // running
  int64_t max_submit_jobs_per_user = -1; // pending + running (submit-time check)
  TresLimit max_tres_per_user;           // running jobs of one user in this QoS
  TresLimit grp_tres;                    // all running jobs of this QoS
  int64_t grp_jobs = -1;
  std::string where;
  // --- issue 16 §4 preemption (preempt helper; preempt_config.h) ---
  std::vector<std::string> preempt;      // Preempt=: the QoS whose jobs this QoS may preempt
  PreemptModeKind preempt_mode = PreemptModeKind::kUnset;  // PreemptMode= for jobs of this QoS
  int64_t grace_time = 0;                // GraceTime= seconds (SIGTERM .. SIGKILL); 0 = partition's
  int64_t preempt_exempt_time = -1;      // PreemptExemptTime= seconds; -1 = the cluster's
  // Whether the association store holds the four fields above (h16g: tacctmgr sets them; a
  // store written before they were stored keeps tessera.conf's, ctld/accounts/README.md).
  bool preempt_stored = false;
  // --- issue 15 (toposched): TopologyMode=required|preferred; -1 = the partition's mode ---
  int topology_mode = -1;                // 0 = preferred, 1 = required
};

// Association limits (issue 16 §1; sacctmgr's names). -1 / Unlimited() = no limit.
struct AssocLimits {
  TresLimit grp_tres;                    // running jobs of the association (and its children)
  int64_t grp_jobs = -1;                 // running jobs
  int64_t grp_submit_jobs = -1;          // pending + running
  TresLimit max_tres_per_job;
  int64_t max_jobs = -1;                 // running jobs per user
  int64_t max_submit_jobs = -1;          // pending + running per user
  int64_t max_wall = -1;                 // seconds
};

// An account: a node of the account tree and a queue (DESIGN §4). The live tree is kept by
// ctld from the durable association store (seeded from AccountName= lines; `tacctmgr` changes
// it); the scheduler and the fair-share code read it from here.
struct AccountConfig {
  std::string name;
  std::string parent;                    // "" = top level (under root)
  TresLimit grp_tres;                    // running jobs of this account and its children
  int64_t grp_jobs = -1;
  std::string where;
  // --- issue 16 ---
  uint32_t fairshare = 1;                // Fairshare= (sacctmgr "Share"), raw shares
  AssocLimits limits;                    // GrpTRES above stays the config's; limits.grp_tres ==
                                         // grp_tres once the store owns the account
  std::vector<std::string> qos;          // QOS= allowed; empty = every QoS
  std::string default_qos;               // DefaultQOS=
  std::string description, organization;
  // Queue semantics (§2): guaranteed share, hard cap, weight for idle capacity.
  TresLimit guarantee;                   // Guarantee=gres/gpu=16 (-1 = none)
  TresLimit limit;                       // Limit= hard cap (-1 = none)
  uint32_t weight = 1;                   // Weight= share of idle capacity lent by weight
  bool reclaimable = true;               // Reclaimable=: borrowed capacity may be reclaimed
};

// A user's association with an account (sacctmgr "assoc" rows for users).
struct UserAssocConfig {
  std::string user;
  std::string account;
  uint32_t fairshare = 1;
  AssocLimits limits;
  std::vector<std::string> qos;          // empty = the account's
  std::string default_qos;
  std::string where;                     // acct helper: "file:line" of its UserName= line
};

// PriorityFlags bits (issue 16 §3).
inline constexpr uint32_t kPriorityFlagNoFairTree = 1;
inline constexpr uint32_t kPriorityFlagMaxTres = 2;
inline constexpr uint32_t kPriorityFlagMaxTresGres = 4;

// Default policy (issue 17 §2): what a tessera.conf without PriorityWeight* keys schedules
// with, in ctld and tessera-sim alike: multifactor priority = age + time limit, backfill in that
// order reserving the first 4 blocked jobs (BuildSchedConfig sets kDefaultPolicyDepth), and
// before that order the oldest eligible job of each partition started or reserved
// once it has waited an hour (SchedulerParameters=bf_oldest=1,bf_oldest_wait=3600).
//   - time limit (priority.h): shorter jobs first, on a log scale from 1 minute to
//     PriorityTimeLimitMax (7 days), weight 4000: 1 min -> 4000, 10 min -> 3001, 1 h -> 2223,
//     1 day -> 844, 7 days -> 0.
//   - age: weight 7000 over PriorityMaxAge 7 days = 1000 a day of waiting.
//   Starvation bound: the oldest eligible job of each partition (by submit time, as EASY's
//   head), once it has waited an hour, starts or holds a reservation before any job of the
//   priority order is placed, so from then on no job started later delays it (bf_oldest): its
//   wait is bounded as under FCFS EASY (plus the hour), whatever the priorities. (Without bf_oldest the bound is the
//   ordering's: a job's time-limit advantage is at most 4000 = 4 days of age, so a job is
//   overtaken only by jobs submitted less than 4 days after it.)
// Bench figures against FCFS EASY: bench/RESULTS.md "Default policy vs EASY".
inline constexpr uint32_t kDefaultWeightAge = 7000;
inline constexpr uint32_t kDefaultWeightTimeLimit = 4000;
inline constexpr int64_t kDefaultMaxAge = 7 * 86400;

// Node order (issue 17 §2): the defaults of nodeorder's endtime and size scores (values in
// sched_config.cc; bench/RESULTS.md "Default policy vs EASY").
extern const double kDefaultEndtimeWeight;
extern const double kDefaultSizeWeight;
extern const double kDefaultScarceWeight;

struct SchedConfig {
  std::vector<std::string> actions = {"enqueue", "allocate", "migplan", "backfill"};
  std::vector<std::string> plugins = {"priority",  "gang",      "predicates",
                                      "nodeorder", "lifecycle", "limits"};
  // SchedulerParameters
  uint32_t bf_reservation_depth = 1;     // 1 = EASY (default policy: 4, BuildSchedConfig)
  // bf_oldest=N,bf_oldest_wait=S (issue 17 §2, the starvation bound): the N oldest eligible
  // jobs of each partition (by submit time) that have waited at least S seconds are started or
  // reserved before the priority order (actions.cc ServeOldest); N = 0: off (Slurm's formula,
  // the sim's FCFS presets). Default policy: 1 job, 3600 s (BuildSchedConfig).
  uint32_t bf_oldest = 0;
  int64_t bf_oldest_wait = 0;
  int64_t bf_window = 86400;             // how far ahead reservations may be placed (s)
  uint32_t bf_max_times = 2000;          // start times tried per reservation
  uint32_t score_window = 16;            // feasible nodes scored per placement
  double binpack_weight = 1;             // nodeorder: fill partly used nodes first
  double spread_weight = 0;              // nodeorder: prefer emptier nodes
  // nodeorder's placement rule (issue 17 §2, "Node order" above); defaults in sched_config.cc
  double endtime_weight = kDefaultEndtimeWeight;  // prefer nodes busy at least as long as the job
  double size_weight = kDefaultSizeWeight;        // prefer the smallest nodes that fit
  double scarce_weight = kDefaultScarceWeight;    // keep off nodes few others match in size
  int64_t default_time = 365 * 86400;    // time limit when neither job nor partition has one
  int64_t mig_reconfig_seconds = 10;     // migplan: a GPU being re-laid is held this long
  uint32_t mig_plan_depth = 64;          // migplan: pending MIG-profile jobs planned per cycle
  // Multifactor priority (Slurm's PriorityWeight*). The values here are the default policy
  // (issue 17 §2, see "Default policy" above); a file naming any PriorityWeight* key gets
  // Slurm's formula instead: unnamed weights 0, PriorityMaxAge 7-0 (BuildSchedConfig).
  uint32_t weight_age = kDefaultWeightAge;
  uint32_t weight_fairshare = 0;
  uint32_t weight_job_size = 0;
  uint32_t weight_partition = 0;
  uint32_t weight_qos = 0;
  int64_t priority_max_age = kDefaultMaxAge;
  bool favor_small = false;
  // --- issue 17 §2: the time-limit factor (priority.h; keys in ParseGlobal) ---
  //   PriorityWeightTimeLimit=N  PriorityTimeLimitMax=7-0
  uint32_t weight_time_limit = kDefaultWeightTimeLimit;
  int64_t priority_time_limit_max = 7 * 86400;
  std::map<std::string, QosConfig> qos;
  std::string default_qos = "normal";
  std::map<std::string, AccountConfig> accounts;
  // --- issue 16: associations (kept live by ctld from the store) ---
  std::vector<UserAssocConfig> user_assocs;
  std::map<std::string, std::string> default_account;  // user -> DefaultAccount
  // AccountingStorageEnforce= (associations, limits, qos, safe...): what submit refuses.
  bool enforce_associations = false, enforce_limits = false, enforce_qos = false;
  // --- issue 16 §3: fair share (fairshare helper; keys parsed in sched_config_fairshare.cc,
  // used by ctld/sched/fairshare.h) ---
  //   PriorityDecayHalfLife=7-0  PriorityUsageResetPeriod=NONE|NOW|DAILY|WEEKLY|MONTHLY|
  //   QUARTERLY|YEARLY  PriorityFlags=NO_FAIR_TREE,MAX_TRES,MAX_TRES_GRES
  //   PartitionName=... TRESBillingWeights="CPU=1.0,Mem=0.25G,GRES/gpu=2.0"
  //   AccountName=... Fairshare=N (raw shares; "parent" is not supported)
  int64_t priority_decay_half_life = 7 * 86400;   // seconds; 0 = no decay
  std::string priority_usage_reset = "NONE";      // upper case, validated
  uint32_t priority_flags = 0;                    // kPriorityFlag* bits
  std::map<std::string, std::string> tres_billing_weights;  // partition -> weights (validated)
  std::vector<std::string> warnings;
  // --- issue 16 §4 preemption (preempt helper; preempt_config.h) ---
  PreemptType preempt_type = PreemptType::kNone;
  PreemptModeSpec preempt_mode;          // cluster default (unset with a preempt type = CANCEL)
  int64_t preempt_exempt_time = 0;       // PreemptExemptTime= seconds
  std::map<std::string, PartitionPreempt> partition_preempt;  // PartitionName= PreemptMode/GraceTime
  uint32_t preempt_depth = 16;           // SchedulerParameters=preempt_depth: preemptors tried per cycle

  const QosConfig* FindQos(const std::string& name) const;
};

// --- acct helper (issue 16 §1): association lines, field setters, AccountingStorageEnforce
// (sched_config_assoc.cc). Keys are case-insensitive; "-1" or "" clears a limit; TRES values
// merge item by item ("GrpTRES=gres/gpu=-1" clears only the GPU item), as sacctmgr's.
//   AccountName=physics Parent=root Description= Organization= Fairshare=10 (Share=)
//       GrpTRES= GrpJobs= GrpSubmitJobs= MaxTRESPerJob= (MaxTRES=) MaxJobs= MaxSubmitJobs=
//       MaxWall= QOS=normal,high DefaultQOS= Guarantee= Limit= Weight= Reclaimable=yes|no
//   UserName=alice Accounts=physics,chem DefaultAccount=physics [Fairshare= MaxJobs= ...
//       QOS= DefaultQOS=]   one association per account, all with these settings
//   AccountingStorageEnforce=associations,limits,qos[,safe]   (limits and qos imply
//       associations, as in Slurm; safe is accepted and acts as limits)
// Each setter returns false for a key it does not know, an error for a bad value.
Result<bool> SetAssocLimit(const std::string& key, const std::string& value, AssocLimits& l);
Result<bool> SetAccountField(const std::string& key, const std::string& value, AccountConfig& a);
Result<bool> SetUserAssocField(const std::string& key, const std::string& value,
                               UserAssocConfig& u);
// QoS fields tacctmgr may set (the QOSName= line's keys), the preemption fields included
// (Preempt=, PreemptMode=, GraceTime= seconds, PreemptExemptTime= a time; they set
// preempt_stored).
Result<bool> SetQosField(const std::string& key, const std::string& value, QosConfig& q);
// Merges "cpu=4,mem=8G,gres/gpu=2,node=1" into `t`; an item's -1 clears it; "" or "-1" clears all.
Status MergeTres(const std::string& s, TresLimit& t);
std::string FormatTres(const TresLimit& t);  // "cpu=4,mem=8G,node=1,gres/gpu=2"; "" = none
// A UserName= line (adds to c.user_assocs and c.default_account).
Status ParseUserLine(const ConfigLine& l, SchedConfig& c);
// AccountingStorageEnforce's value.
Status ParseEnforce(const std::string& where, const std::string& value, SchedConfig& c);
// The AccountName= keys beyond the base ones (Parent, GrpTRES, GrpJobs); false = unknown key.
Result<bool> ParseAccountExtra(const ConfigPair& p, AccountConfig& a);
// After all lines: users' accounts and default accounts exist, QoS names exist (when QoS are
// configured), default QoS are among the allowed ones.
Status CheckAssocLines(const SchedConfig& c);

// Builds the scheduler config from tessera.conf lines (the output of ParseConfigFile). Lines and
// keys that are not the scheduler's are skipped silently (cluster_config owns them).
Result<SchedConfig> BuildSchedConfig(const std::vector<ConfigLine>& lines);

// --- issue 16 §4 preemption (preempt helper; implemented in preempt_config.cc) ---
// A QOSName= key of preemption (Preempt, PreemptMode, GraceTime, PreemptExemptTime): parsed
// into `q` with *handled = true; other keys leave *handled false.
Status ParseQosPreemptKey(const ConfigPair& p, QosConfig& q, bool* handled);
// A cluster key of preemption (PreemptType, PreemptMode, PreemptExemptTime); *handled as above.
Status ParsePreemptGlobal(const std::string& where, const ConfigPair& p, SchedConfig& c,
                          bool* handled);
// A PartitionName= line's PreemptMode=/GraceTime= (PartitionName=DEFAULT sets later lines').
Status ParsePartitionPreempt(const ConfigLine& l, SchedConfig& c, PartitionPreempt& defaults);
// After every line: checks Preempt= names, adds "preempt" after "allocate" to the default
// actions when a preempt type is set, warns about GANG.
Status FinishPreemptConfig(SchedConfig& c);

// --- issue 17 §2 (h17p): the warnings of one loaded tessera.conf, shared by ctld and
// tessera-sim (sched_config_warnings.cc) ---
// The cluster's warnings (LoadClusterConfig, topology.conf) then the scheduler's, in file order.
std::vector<std::string> ConfigWarnings(const std::vector<std::string>& cluster_warnings,
                                        const SchedConfig& c);
// One line per warning: "<program>: warning: <file:line: text>".
void PrintConfigWarnings(std::ostream& out, const std::string& program,
                         const std::vector<std::string>& warnings);

}  // namespace tessera::sched
