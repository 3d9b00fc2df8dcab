#pragma once
// Issue 19 (h19): adding up tessera.v1.StepUsage parts (one per node, or per task): maxima and
// minima keep the node and task they came from, sums add. noded (per task), trun (per node).
#include "tessera/v1/types.pb.h"

namespace tessera::rpc {

// Adds `part` into *total (a total with ntasks 0 becomes `part`; a part with ntasks 0 adds
// nothing).
void AddStepUsage(const tessera::v1::StepUsage& part, tessera::v1::StepUsage* total);

}  // namespace tessera::rpc
