#include "ctld/step_layout.h"

#include <algorithm>

namespace tessera::ctld {

Result<std::vector<StepPlacement>> LayoutStep(const JobRecord& job, const StepRequest& req) {
  if (!req.node_names.empty()) {  // srun -w/-x (issue 19): these nodes of the job, in this order
    JobRecord view;
    view.job_id = job.job_id;
    for (const auto& name : req.node_names) {
      auto it = std::find_if(job.alloc.begin(), job.alloc.end(),
                             [&](const NodeAlloc& a) { return a.node == name; });
      if (it == job.alloc.end())
        return InvalidArgument("Requested node configuration is not available: node " + name +
                               " is not part of job " + std::to_string(job.job_id));
      if (std::any_of(view.alloc.begin(), view.alloc.end(),
                      [&](const NodeAlloc& a) { return a.node == name; }))
        return InvalidArgument("node " + name + " is named twice");
      view.alloc.push_back(*it);
    }
    StepRequest r = req;
    r.node_names.clear();
    if (r.nodes == 0 || r.nodes > view.alloc.size()) r.nodes = static_cast<uint32_t>(view.alloc.size());
    return LayoutStep(view, r);
  }
  const auto& alloc = job.alloc;
  if (alloc.empty()) return FailedPrecondition("job " + std::to_string(job.job_id) + " has no allocation");
  uint32_t nodes = req.nodes ? req.nodes : static_cast<uint32_t>(alloc.size());
  if (nodes > alloc.size())
    return InvalidArgument("step asks for " + std::to_string(nodes) + " nodes but job " +
                           std::to_string(job.job_id) + " has " + std::to_string(alloc.size()));
  uint32_t ntasks = req.ntasks;
  if (ntasks == 0) ntasks = req.ntasks_per_node ? nodes * req.ntasks_per_node : 0;
  if (ntasks == 0) {
    for (uint32_t i = 0; i < nodes; ++i) ntasks += std::max<uint32_t>(1, alloc[i].tasks);
  }
  if (ntasks < nodes) nodes = ntasks;  // srun: fewer tasks than nodes uses fewer nodes
  uint32_t cpt = std::max<uint32_t>(1, req.cpus_per_task);
  // Per-node shares: explicit, else the job's task counts when they add up, else even.
  std::vector<uint32_t> share(nodes, 0);
  uint32_t job_tasks = 0;
  for (uint32_t i = 0; i < nodes; ++i) job_tasks += alloc[i].tasks;
  for (uint32_t i = 0; i < nodes; ++i) {
    if (req.ntasks_per_node) share[i] = req.ntasks_per_node;
    else if (job_tasks == ntasks) share[i] = alloc[i].tasks;
    else share[i] = (ntasks + nodes - 1) / nodes;
  }
  uint32_t capacity = 0;
  for (uint32_t s : share) capacity += s;
  if (capacity < ntasks)
    return InvalidArgument(std::to_string(ntasks) + " tasks do not fit " + std::to_string(nodes) +
                           " nodes with --ntasks-per-node=" + std::to_string(req.ntasks_per_node));
  std::vector<StepPlacement> out;
  // Block distribution; every node used gets at least one task.
  uint32_t rank = 0;
  for (uint32_t i = 0; i < nodes && rank < ntasks; ++i) {
    uint32_t left_nodes = nodes - i - 1;
    uint32_t take = std::min(share[i], ntasks - rank - std::min(left_nodes, ntasks - rank - 1));
    take = std::max<uint32_t>(1, take);
    if (take * cpt > alloc[i].cpus)
      return InvalidArgument("step needs " + std::to_string(take * cpt) + " CPUs on " + alloc[i].node +
                             " but the job has " + std::to_string(alloc[i].cpus) + " there");
    StepPlacement p{alloc[i].node, {}};
    for (uint32_t k = 0; k < take; ++k) p.ranks.push_back(rank++);
    out.push_back(std::move(p));
  }
  if (rank < ntasks) return InvalidArgument("could not place all " + std::to_string(ntasks) + " tasks");
  return out;
}

Result<NodeAlloc> StepNodeAlloc(const JobRecord& job, const std::string& node) {
  for (const auto& a : job.alloc)
    if (a.node == node) return a;
  return FailedPrecondition("job " + std::to_string(job.job_id) + " has no allocation on node " +
                            node);
}

}  // namespace tessera::ctld
