#pragma once
// Issue 19: Slurm's EnforcePartLimits (ClusterConfig::enforce_part_limits) for the partition's
// MaxTime. NO (Slurm's default): a job
// over its partition's MaxTime is accepted and waits, reason PartitionTimeLimit, until the
// limit or the job changes; ANY / ALL (YES = ANY): such a job is refused at submit. Either way
// a pending job over the limit (MaxTime lowered by a reconfigure) never starts.
#include <cstdint>
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "common/status.h"
#include "ctld/sched/snapshot.h"

namespace tessera::ctld {

// True when `limit_s` (-1 unlimited) is over the partition's MaxTime.
bool OverPartitionTime(const PartitionConfig& part, int64_t limit_s);

// Removes from snap.pending every job over its partition's MaxTime; returns their ids (the
// caller gives them reason PartitionTimeLimit).
std::vector<uint64_t> HoldOverPartitionTime(const ClusterConfig& cfg, sched::ClusterSnapshot& snap);

}  // namespace tessera::ctld
