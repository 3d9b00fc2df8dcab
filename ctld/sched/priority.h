#pragma once
// Slurm's multifactor priority:
//   priority = W_age * age + W_fairshare * fairshare + W_jobsize * size + W_partition * tier
//            + W_qos * qos - nice
// with every factor in [0, 1]:
//   age       = min(1, (now - eligible_time) / PriorityMaxAge)
//   fairshare = JobSnap::fairshare (ctld/sched/fairshare.h FillFairshare: Fair Tree or classic)
//   size      = max(job CPUs / cluster CPUs, job GPUs / cluster GPUs); 1 - that with
//               PriorityFavorSmall=YES
//   tier      = partition PriorityTier / highest PriorityTier
//   qos       = QoS Priority / highest QoS Priority
// plus Tessera's time-limit factor (issue 17 §2; not in Slurm), W_timelimit * timelimit:
//   timelimit = 1 - clamp(log(limit / 60 s) / log(PriorityTimeLimitMax / 60 s), 0, 1)
//               with `limit` the job's effective time limit: 1 for jobs of a minute or less,
//               0 at PriorityTimeLimitMax and beyond, log-scaled between (shorter = higher).
// With W_age >= W_timelimit, a job that has waited PriorityMaxAge * W_timelimit / W_age
// outranks any younger job of the same other factors whatever their limits: the starvation
// bound of the default policy (sched_config.h "Default policy").
// An admin-set priority (JobSnap::priority > 0) replaces the formula.
#include <cstdint>

#include "ctld/sched/sched_config.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sched {

struct PriorityContext {
  int64_t now = 0;
  int64_t cluster_cpus = 0;
  int64_t cluster_gpus = 0;
  uint32_t max_tier = 1;
  int64_t max_qos_priority = 0;
};

PriorityContext MakePriorityContext(const ClusterSnapshot& snap, const SchedConfig& cfg);

// `cpus`/`gpus`: the job's whole request; `tier`: its partition's PriorityTier; `time_limit`:
// its effective time limit in seconds (EffectiveTimeLimit; 0 = JobSnap::time_limit, else
// SchedConfig::default_time).
int64_t MultifactorPriority(const JobSnap& j, int64_t cpus, int64_t gpus, uint32_t tier,
                            const SchedConfig& cfg, const PriorityContext& ctx,
                            int64_t time_limit = 0);

// The time limit the scheduler plans with: the job's, else the partition's DefaultTime, else
// its MaxTime, else SchedulerParameters default_time. `p` may be null.
int64_t EffectiveTimeLimit(const JobSnap& j, const PartitionSnap* p, const SchedConfig& cfg);

// The time-limit factor in [0, 1] (unweighted; formula above).
double TimeLimitFactor(int64_t time_limit, const SchedConfig& cfg);

// --- issue 16 §3 (fairshare helper): the formula's parts, for tprio (sprio) ---
// Each factor is already multiplied by its weight (sprio's numbers); total = the job's priority
// (the admin-set one when JobSnap::priority > 0, with the parts still shown).
struct PriorityFactors {
  double age = 0, fairshare = 0, job_size = 0, partition = 0, qos = 0;
  int64_t nice = 0;
  int64_t total = 0;
  double time_limit = 0;  // issue 17 §2: W_timelimit * timelimit
};
PriorityFactors MultifactorFactors(const JobSnap& j, int64_t cpus, int64_t gpus, uint32_t tier,
                                   const SchedConfig& cfg, const PriorityContext& ctx,
                                   int64_t time_limit = 0);

}  // namespace tessera::sched
