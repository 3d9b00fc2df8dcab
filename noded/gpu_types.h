#pragma once
// NVML product names -> the Type= an administrator configured in gres.conf (issue 14). NVML
// reports "NVIDIA H100 80GB HBM3" where gres.conf says Type=h100; jobs ask for the configured
// type (--gres=gpu:h100:1), so a real node must report that type or typed requests pend forever.
//
// A reported name matches a configured type (case-insensitive, NVIDIA's "NVIDIA " prefix
// ignored) when: they are equal; or both name the same MIG table (common/mig_profiles.h aliases,
// with the board memory: FindMigModelFor); or the type is a substring of the name ("h100" in
// "h100 80gb hbm3"). Equality beats a MIG-table match, which beats a substring (the longest
// substring wins). A name that matches no configured type keeps NVML's name and is noted, so
// the admin sees that typed requests will not use that GPU.
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "noded/gpu_backend.h"

namespace tessera::noded {

// The configured type that `reported` (with `memory_mib`, 0 = unknown) matches; "" when none.
std::string MatchConfiguredType(const std::string& reported, uint64_t memory_mib,
                                const std::vector<std::string>& types);

// Renames every non-simulated GPU in `gpus` to the configured type it matches among the
// non-simulated declarations `decls` (this node's gres.conf lines). Returns one note per GPU
// whose name changed ("GPU 0: NVML name '...' is gres.conf Type=h100 (file:line)") and one
// warning per GPU matching no type. Nothing happens without non-simulated declarations.
std::vector<std::string> ApplyConfiguredTypes(std::vector<GpuInfo>& gpus,
                                              const std::vector<GpuDecl>& decls);

}  // namespace tessera::noded
