#pragma once
// SchedConfig: the scheduler's part of tessera.conf, built from parsed ConfigLine records.
//
// Keys (slurm.conf syntax; case-insensitive):
//   SchedulerActions=enqueue,allocate,migplan,backfill      actions, run in this order
//   SchedulerPlugins=priority,gang,predicates,nodeorder,lifecycle,limits  (or fifo for priority)
//   SchedulerParameters=bf_reservation_depth=1,bf_window=1440,sched_score_window=16,
//                       binpack_weight=1,spread_weight=0,default_time=365-0,bf_max_times=2000,
//                       mig_reconfig_seconds=10,mig_plan_depth=64
//   PriorityWeightAge= PriorityWeightFairshare= PriorityWeightJobSize= PriorityWeightPartition=
//   PriorityWeightQOS= PriorityMaxAge=7-0   PriorityFavorSmall=NO
//   QOSName=normal Priority=10 MaxWall=1-0 MaxJobsPerUser=4 MaxSubmitJobsPerUser=100
//       MaxTRESPerUser=gres/gpu=8,cpu=64 GrpTRES=gres/gpu=32 GrpJobs=100 [Default=YES]
//   AccountName=physics Parent=root GrpTRES=gres/gpu=16 GrpJobs=50
// Unknown SchedulerParameters options are warnings (Slurm has many); unknown action or plugin
// names are errors naming the name and the line. Every error is "file:line: message".
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/config_file.h"
#include "common/status.h"

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
};

// PriorityFlags bits (issue 16 §3).
inline constexpr uint32_t kPriorityFlagNoFairTree = 1;
inline constexpr uint32_t kPriorityFlagMaxTres = 2;
inline constexpr uint32_t kPriorityFlagMaxTresGres = 4;

struct SchedConfig {
  std::vector<std::string> actions = {"enqueue", "allocate", "migplan", "backfill"};
  std::vector<std::string> plugins = {"priority",  "gang",      "predicates",
                                      "nodeorder", "lifecycle", "limits"};
  // SchedulerParameters
  uint32_t bf_reservation_depth = 1;     // 1 = EASY; large = conservative backfill
  int64_t bf_window = 86400;             // how far ahead reservations may be placed (s)
  uint32_t bf_max_times = 2000;          // start times tried per reservation
  uint32_t score_window = 16;            // feasible nodes scored per placement
  double binpack_weight = 1;             // nodeorder: fill partly used nodes first
  double spread_weight = 0;              // nodeorder: prefer emptier nodes
  int64_t default_time = 365 * 86400;    // time limit when neither job nor partition has one
  int64_t mig_reconfig_seconds = 10;     // migplan: a GPU being re-laid is held this long
  uint32_t mig_plan_depth = 64;          // migplan: pending MIG-profile jobs planned per cycle
  // Multifactor priority (Slurm's PriorityWeight*)
  uint32_t weight_age = 0;
  uint32_t weight_fairshare = 0;
  uint32_t weight_job_size = 0;
  uint32_t weight_partition = 0;
  uint32_t weight_qos = 0;
  int64_t priority_max_age = 7 * 86400;
  bool favor_small = false;
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

  const QosConfig* FindQos(const std::string& name) const;
};

// Builds the scheduler config from tessera.conf lines (the output of ParseConfigFile). Lines and
// keys that are not the scheduler's are skipped silently (cluster_config owns them).
Result<SchedConfig> BuildSchedConfig(const std::vector<ConfigLine>& lines);

}  // namespace tessera::sched
