#pragma once
// Slurm's multifactor priority:
//   priority = W_age * age + W_fairshare * fairshare + W_jobsize * size + W_partition * tier
//            + W_qos * qos - nice
// with every factor in [0, 1]:
//   age       = min(1, (now - eligible_time) / PriorityMaxAge)
//   fairshare = JobSnap::fairshare (filled by the fair-share issue; 0 today)
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

}  // namespace tessera::sched
