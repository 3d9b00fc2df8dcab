#pragma once
// `tinfo --gpus`: the GPU pool at a glance. One line per node (sorted as sinfo sorts names):
//   NODE  STATE  [cells]  details
// with one character cell per GPU:
//   .  free        #  allocated to a job        X  unhealthy (reason in the details)
//   -  on a drained/draining/down/failed node (not schedulable)
//   m  MIG enabled, no instance in use          M  MIG enabled, some instances in use
// Details list the job of each allocated GPU ("0-1:42 3:57"), MIG layouts as
// index:mig[profile@start:job(uuid),...] with "-" for a free instance
// ("2:mig[3g.40gb@0:42(MIG-...),4g.40gb@4:-(MIG-...)]") and unhealthy reasons
// ("1:X(ecc errors)"). A MIG-mode GPU counts as allocated when a job holds one of its
// instances, free otherwise. Nodes reporting no GPUs get a line "[]  no GPUs reported". The
// summary counts GPUs by condition and, per MIG profile, free/total instances.
// Allocations come from the running jobs (NodeAllocation.gpu_indices, mig_uuids) and the
// nodes' MigInstance.in_use_by_job; GPUs the node reports as allocated without a known job
// show '#' with job "?".
#include <string>
#include <vector>

#include "tessera/v1/types.pb.h"

namespace tessera::cli {

std::string FormatGpuPool(const std::vector<tessera::v1::NodeInfo>& nodes,
                          const std::vector<tessera::v1::JobInfo>& jobs);

}  // namespace tessera::cli
