#pragma once
// trun -w/--nodelist and -x/--exclude (issue 19). The chosen nodes are the listed ones (each
// must belong to the job, else srun's "Requested node configuration is not available"; with a
// larger --nodes the job's other nodes follow in order), never an excluded one, in the job's
// node order (as Slurm orders a step's nodes). trun sends them as CreateStepRequest.node_names,
// so a step may run on any nodes of its allocation.
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "tessera/v1/controller.pb.h"

namespace tessera::cli {

// `nodes` is --nodes (0 = not given). Errors as srun's where it has one.
Result<std::vector<std::string>> StepNodes(const tessera::v1::JobInfo& job,
                                           const std::string& nodelist,
                                           const std::string& exclude, uint32_t nodes);

}  // namespace tessera::cli
