#pragma once
// Dynamic MIG in tessera-sim (issue 14 §2): a generated workload of single-instance MIG jobs
// replayed through the real scheduler (RunCycle with the migplan action) on simulated H100-80GB
// GPUs under three policies:
//  - kWholeGpu: no MIG; every job takes a whole GPU whatever its profile;
//  - kStatic:   fixed layouts, as admins configure them today (per node of 4 GPUs: 7 x 1g.10gb,
//               3 x 2g.20gb, 2 x 3g.40gb, 1 x 7g.80gb; more GPUs repeat the pattern);
//  - kDynamic:  the same starting layouts with MigStrategy=dynamic: the scheduler re-lays GPUs
//               whose instances are all free; a reconfiguration takes mig_reconfig_seconds of
//               virtual time, during which the GPU is unusable.
//
// Workload (GenerateMigWorkload, deterministic for a seed; std::mt19937_64): `jobs` jobs, one MIG
// instance each, in three equal phases whose profile mix shifts over time (share of 1g / 2g / 3g
// / 7g): phase 1 small-heavy 60/25/10/5, phase 2 large-heavy 10/20/40/30, phase 3 even 25/25/25/25.
// Runtimes exponential with mean `mean_runtime` (clipped to [60 s, 8 x mean]), time limit =
// runtime.
// Arrivals Poisson with a rate giving `load` x the cluster's memory slices in offered demand
// (memory slices of the profile x runtime) over the mean job mix.
//
// Metrics: mean and p95 wait (start - submit), GPU-memory utilization = time integral of the
// memory slices the running jobs asked for (1g: 1, 2g: 2, 3g: 4, 7g: 8; a whole GPU used by a 1g
// job counts 1 of its 8) over 8 x GPUs x (last end - first submit), reconfigurations, makespan.
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::sim {

struct MigWorkloadOptions {
  uint32_t nodes = 4;
  uint32_t gpus_per_node = 4;
  uint32_t jobs = 600;
  uint64_t seed = 1;
  double load = 0.85;
  int64_t mean_runtime = 1800;
  int64_t reconfig_seconds = 10;
};

struct MigJobSpec {
  int64_t submit = 0;
  int64_t runtime = 0;
  std::string profile;    // "1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"
  uint32_t slices = 0;    // memory slices of the profile
};

enum class MigMode { kWholeGpu, kStatic, kDynamic };

struct MigSimResult {
  std::string label;
  size_t jobs = 0, finished = 0, reconfigs = 0;
  double mean_wait = 0, p95_wait = 0;
  double gpu_mem_util = 0;  // 0..1
  int64_t makespan = 0;
};

std::vector<MigJobSpec> GenerateMigWorkload(const MigWorkloadOptions& o);
MigSimResult SimulateMig(const MigWorkloadOptions& o, const std::vector<MigJobSpec>& jobs,
                         MigMode mode);
// A table of the results (Markdown).
std::string MigTable(const MigWorkloadOptions& o, const std::vector<MigSimResult>& rs);

}  // namespace tessera::sim
