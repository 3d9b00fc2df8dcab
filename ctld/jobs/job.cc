#include "ctld/jobs/job.h"

namespace tessera::ctld {

uint32_t JobRecord::NumTasks() const {
  uint32_t n = 0;
  for (const auto& g : spec.task_groups) n += g.count;
  return n;
}

uint32_t JobRecord::NumCpus() const {
  if (!alloc.empty()) {
    uint32_t n = 0;
    for (const auto& a : alloc) n += a.cpus;
    return n;
  }
  uint32_t n = 0;
  for (const auto& g : spec.task_groups) n += g.count * std::max<uint32_t>(1, g.per_task.cpus);
  return n;
}

std::vector<std::string> JobRecord::NodeNames() const {
  std::vector<std::string> out;
  for (const auto& a : alloc) out.push_back(a.node);
  return out;
}

}  // namespace tessera::ctld
