#pragma once
// trun -w/--nodelist and -x/--exclude (issue 19). The controller lays a step out over the job's
// nodes in allocation order (CreateStepRequest.nodes = the first N of them), so trun turns the
// node choice into that count: the chosen nodes are the listed ones (each must belong to the
// job; with a larger --nodes the job's other nodes follow in order), never an excluded one.
// When the choice is the job's first N nodes, the answer is N; otherwise it is refused with a
// message naming the nodes (a step cannot skip the job's first nodes yet: that needs a node list
// in CreateStepRequest).
#include <cstdint>
#include <string>

#include "common/status.h"
#include "tessera/v1/controller.pb.h"

namespace tessera::cli {

// `nodes` is --nodes (0 = not given). Errors as srun's where it has one.
Result<uint32_t> StepNodeCount(const tessera::v1::JobInfo& job, const std::string& nodelist,
                               const std::string& exclude, uint32_t nodes);

}  // namespace tessera::cli
