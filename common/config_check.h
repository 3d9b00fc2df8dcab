#pragma once
// What `--check-config` finds beyond what loading refuses (issue 21 §2): things a daemon accepts
// at start and then refuses or marks bad later. Each problem is "file:line: message".
//
// CheckGresMig: gres.conf (beside the config) Name=gpu lines with MigLayout= but not
// MigEnabled=yes (noded refuses the node), MigEnabled=yes on a simulated GPU whose Type= has no
// MIG table, and a MigLayout= with a profile the model does not have or that does not fit (noded
// marks those GPUs unhealthy). Real GPUs of a model without a table are left to NVML.
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "common/mig_profiles.h"

namespace tessera {

// A whole MIG layout from gres.conf-style items "PROFILE[@START]" (MigLayout=): the items with a
// start are checked (ValidateMigLayout), the others placed after them. InvalidArgument names a
// profile the model does not have (with the ones it has), a bad start, or what does not fit.
// Shared by the check below and noded's simulated GPUs (noded/gpu_backend.cc).
Result<std::vector<MigPlacement>> MigLayoutFromItems(const MigModel& m,
                                                     const std::vector<std::string>& items);

std::vector<std::string> CheckGresMig(const ClusterConfig& c);

}  // namespace tessera
