#pragma once
// NVIDIA MIG GPU-instance profiles and placement rules per GPU model, embedded (no file is read
// at run time). Sources (see mig_profiles.cc): NVIDIA MIG User Guide "Supported MIG Profiles"
// https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html , NVML
// nvmlGpuInstancePlacement_t / nvmlDeviceGetGpuInstancePossiblePlacements_v2, cross-checked
// against real `nvidia-smi mig -lgipp` captures as collected in the project's
// shared/data/mig/README.md + profiles.json.
//
// A layout (a set of (profile, start) instances on one GPU) is valid iff:
//  1. every profile exists for the model and every start is one of its allowed starts;
//  2. no two instances share a memory slice (a placement covers [start, start + size));
//  3. per-profile count <= max instances (binds for the +me profiles: one media-extension set);
//  4. exclusive groups hold (A30: at most one of 1g.6gb+me / 2g.12gb+me, inferred);
//  5. the compute slices used do not exceed the model's compute slices;
//  6. driver gates: A100 4g + 3g together needs driver R510+ (driver_major 0 = assume current).
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera {

struct MigProfile {
  const char* name;           // "3g.40gb"
  uint32_t compute;           // compute slices
  uint32_t memory_slices;     // placement size
  uint32_t max_instances;
  std::vector<uint32_t> starts;
  uint32_t nvml_profile;      // NVML_GPU_INSTANCE_PROFILE_* query index
  bool media_extensions;
};

struct MigModel {
  const char* name;                      // "A100-SXM4-40GB"
  std::vector<const char*> aliases;      // lower-case matching, e.g. "a100", "nvidia a100-sxm4-40gb"
  uint32_t memory_slices;
  uint32_t compute_slices;
  uint64_t memory_mib;                   // board memory, for memory-based lookup
  std::vector<MigProfile> profiles;
  std::vector<std::vector<const char*>> exclusive;  // at most one instance from each group
  std::vector<const char*> forbid_before_r510;      // these two not together before R510
};

struct MigPlacement {
  std::string profile;
  uint32_t start = 0;
};

const std::vector<MigModel>& MigModels();
// By model name or alias (case-insensitive; "NVIDIA " prefix ignored). nullptr when unknown.
const MigModel* FindMigModel(const std::string& model);
// As FindMigModel, with the board memory deciding among the models of one family (issue 14): a
// family is the models whose table names share the part before the first '-' ("a100",
// "h100", ...). Type=a100 with 81920 MiB is A100-80GB, not the 40 GB tables the name alone
// gives. The family's model whose memory_mib is nearest wins when within 15% of `memory_mib`;
// otherwise (or with memory_mib 0) the name alone decides. nullptr when the name is unknown.
const MigModel* FindMigModelFor(const std::string& model, uint64_t memory_mib);
const MigProfile* FindMigProfile(const MigModel& m, const std::string& profile);
// Whether `name` is a profile of some model ("3g.40gb": true; "h100", "": false).
bool IsMigProfileName(const std::string& name);
// The memory of a profile as its name states it, in MiB ("3g.40gb" and "1g.10gb+me": 40 and 10
// GiB); 0 when the name has no "<N>g.<M>gb" form. Used for --gpu-mem (smallest fitting profile).
uint64_t MigProfileMemoryMiB(const std::string& profile);

// OK or InvalidArgument naming the first violated rule and the instance(s) involved.
Status ValidateMigLayout(const MigModel& m, const std::vector<MigPlacement>& layout,
                         uint32_t driver_major = 0);

// How many instances of `p` an empty GPU of model `m` holds (0..max_instances).
uint32_t MigEmptyCapacity(const MigModel& m, const MigProfile& p);

// Places `profiles` (no starts given) after `existing`: backtracking over allowed starts,
// larger profiles first. NotFound-style InvalidArgument when they do not fit.
Result<std::vector<MigPlacement>> PlaceMigProfiles(const MigModel& m,
                                                   const std::vector<MigPlacement>& existing,
                                                   const std::vector<std::string>& profiles);

}  // namespace tessera
