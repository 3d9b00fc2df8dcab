#pragma once
// tessera_sched: the scheduler as a pure library. Snapshot in, decisions out; nothing here reads
// a clock, a file or the network. This is the foundation's first-fit placement; the scheduler
// issue replaces RunCycle's body with session/actions/plugins behind the same entry points.
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sched {

struct NodePlacement {
  std::string node;
  uint32_t cpus = 0;
  uint64_t mem_mib = 0;
  std::vector<uint32_t> gpu_indices;
  uint32_t tasks = 0;
};

struct Decision {
  enum class Kind { kStart, kPending };
  Kind kind = Kind::kPending;
  uint64_t job_id = 0;
  std::vector<NodePlacement> placement;  // kStart
  std::string reason;                    // kPending: Slurm vocabulary
};

struct CycleResult {
  std::vector<Decision> decisions;
  uint64_t jobs_considered = 0;
};

// Considers pending jobs in priority order (priority desc, submit time, id) and starts every job
// whose whole allocation (all tasks of all groups at once) fits now; others get a reason.
CycleResult RunCycle(const ClusterSnapshot& snap);

// Where `job` would go on `nodes` (free resources as given), or a reason it cannot.
// All-or-nothing: either every task is placed or nothing is returned.
Result<std::vector<NodePlacement>> Place(const JobSnap& job, const std::vector<const NodeSnap*>& nodes);

// "Busy vs never": OK if the job could run on its partition's nodes were they all idle;
// otherwise an error saying which part of the request can never be met.
Status CheckSatisfiable(const JobSnap& job, const ClusterSnapshot& empty_cluster);

}  // namespace tessera::sched
