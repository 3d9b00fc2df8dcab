// trun -w/-x (trun_nodes.h).
#include "cli/lib/trun_nodes.h"

#include <algorithm>
#include <set>
#include <vector>

#include "common/hostlist.h"

namespace tessera::cli {

Result<std::vector<std::string>> StepNodes(const tessera::v1::JobInfo& job,
                                           const std::string& nodelist,
                                           const std::string& exclude, uint32_t nodes) {
  std::vector<std::string> alloc;
  for (const auto& a : job.alloc()) alloc.push_back(a.node());
  std::string id = std::to_string(job.job_id());
  if (alloc.empty()) return FailedPrecondition("job " + id + " has no allocated nodes");
  std::set<std::string> excluded, listed;
  if (!exclude.empty()) {
    auto ex = ExpandHostlist(exclude);
    if (!ex.ok()) return InvalidArgument("invalid --exclude \"" + exclude + "\": " + ex.status().message());
    excluded.insert(ex->begin(), ex->end());
  }
  if (!nodelist.empty()) {
    auto w = ExpandHostlist(nodelist);
    if (!w.ok()) return InvalidArgument("invalid --nodelist \"" + nodelist + "\": " + w.status().message());
    for (const auto& n : *w) {
      if (std::find(alloc.begin(), alloc.end(), n) == alloc.end())
        return InvalidArgument("Requested node configuration is not available: node " + n +
                               " is not part of job " + id + " (" + CompressHostlist(alloc) + ")");
      if (excluded.count(n)) return InvalidArgument("node " + n + " is both in --nodelist and in --exclude");
      listed.insert(n);
    }
    if (nodes && listed.size() > nodes)
      return InvalidArgument("--nodelist names " + std::to_string(listed.size()) +
                             " nodes but --nodes=" + std::to_string(nodes));
  }
  size_t want = nodes ? nodes : !listed.empty() ? listed.size() : alloc.size() - std::count_if(
      alloc.begin(), alloc.end(), [&](const std::string& n) { return excluded.count(n) > 0; });
  std::vector<std::string> chosen;  // in the job's node order, as Slurm orders a step's nodes
  for (const auto& n : alloc)
    if (listed.count(n)) chosen.push_back(n);
  for (const auto& n : alloc)
    if (chosen.size() < want && !listed.count(n) && !excluded.count(n)) chosen.push_back(n);
  if (chosen.empty() || chosen.size() < want)
    return InvalidArgument("job " + id + " (" + CompressHostlist(alloc) + ") has only " +
                           std::to_string(chosen.size()) + " node(s) left for the step");
  std::sort(chosen.begin(), chosen.end(), [&](const std::string& a, const std::string& b) {
    return std::find(alloc.begin(), alloc.end(), a) < std::find(alloc.begin(), alloc.end(), b);
  });
  return chosen;
}

}  // namespace tessera::cli
