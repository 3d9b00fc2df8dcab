#pragma once
// `tinfo --gpus`: the GPU pool at a glance. One line per node (sorted as sinfo sorts names):
//   NODE  STATE  [cells]  details
// with one character cell per GPU:
//   .  free        #  allocated to a job        X  unhealthy (reason in the details)
//   -  on a drained/draining/down/failed node (not schedulable)
//   m  MIG enabled, no instance in use          M  MIG enabled, some instances in use
// Details list the job of each allocated GPU ("0-1:42 3:57"), MIG layouts
// ("2:mig[3g.40gb:42,4g.40gb:-]") and unhealthy reasons ("1:X(ecc errors)"). A summary line
// counts GPUs by condition. Allocations come from the running jobs (NodeAllocation.gpu_indices);
// GPUs the node reports as allocated without a known job show '#' with job "?".
#include <string>
#include <vector>

#include "tessera/v1/types.pb.h"

namespace tessera::cli {

std::string FormatGpuPool(const std::vector<tessera::v1::NodeInfo>& nodes,
                          const std::vector<tessera::v1::JobInfo>& jobs);

}  // namespace tessera::cli
