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

// `cpus`/`gpus`: the job's whole request; `tier`: its partition's PriorityTier.
int64_t MultifactorPriority(const JobSnap& j, int64_t cpus, int64_t gpus, uint32_t tier,
                            const SchedConfig& cfg, const PriorityContext& ctx);

// --- issue 16 §3 (fairshare helper): the formula's parts, for tprio (sprio) ---
// Each factor is already multiplied by its weight (sprio's numbers); total = the job's priority
// (the admin-set one when JobSnap::priority > 0, with the parts still shown).
struct PriorityFactors {
  double age = 0, fairshare = 0, job_size = 0, partition = 0, qos = 0;
  int64_t nice = 0;
  int64_t total = 0;
};
PriorityFactors MultifactorFactors(const JobSnap& j, int64_t cpus, int64_t gpus, uint32_t tier,
                                   const SchedConfig& cfg, const PriorityContext& ctx);

}  // namespace tessera::sched
