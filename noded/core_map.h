#pragma once
// The node's core map: which concrete core ids each running job holds. noded picks cores for a
// job's CPU count from the cores the fewest jobs use (free ones first, lowest id first), so
// jobs get disjoint cores while the node is not overcommitted. Restored after a restart from
// the jobs' isolation files in the spool. Several simulated nodes on one host each have their
// own map; their cores may overlap, which is fine.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::noded {

class CoreMap {
 public:
  explicit CoreMap(std::vector<uint32_t> cores);
  // `count` cores for `job` (count is clamped to 1..#cores); the same answer again for a job
  // that already has cores.
  std::vector<uint32_t> Assign(uint64_t job, uint32_t count);
  // Records cores a job already holds (after a restart); ids not on this node are dropped.
  void Restore(uint64_t job, const std::vector<uint32_t>& cores);
  void Release(uint64_t job);
  // Cores no job holds, ascending.
  std::vector<uint32_t> Free() const;
  const std::vector<uint32_t>& cores() const { return cores_; }

 private:
  std::vector<uint32_t> cores_;
  std::map<uint64_t, std::vector<uint32_t>> jobs_;
};

// "0-2,5" <-> {0,1,2,5}. Parse errors name the offending part.
std::string FormatCpuList(const std::vector<uint32_t>& cpus);
Result<std::vector<uint32_t>> ParseCpuList(const std::string& text);

// The core ids this process may run on (sched_getaffinity).
std::vector<uint32_t> AllowedCores();

}  // namespace tessera::noded
