#include "ctld/step_gpus.h"

#include <algorithm>

namespace tessera::ctld {

uint32_t StepGpusWanted(const StepGpuRequest& req, size_t node_pos, size_t nodes, size_t ranks) {
  if (req.per_node) return req.per_node;
  if (req.per_task) return req.per_task * static_cast<uint32_t>(ranks);
  if (nodes == 0) return 0;
  auto n = static_cast<uint32_t>(nodes);
  return req.total / n + (node_pos < req.total % n ? 1 : 0);
}

namespace {

const NodeAlloc* AllocOn(const JobRecord& job, const std::string& node) {
  for (const auto& a : job.alloc)
    if (a.node == node) return &a;
  return nullptr;
}

std::string Spec(const StepGpuRequest& req, uint32_t want) {
  return std::to_string(want) + (req.type.empty() ? "" : " " + req.type) + " GPU" +
         (want == 1 ? "" : "s");
}

}  // namespace

Result<std::vector<StepGpus>> PickStepGpus(const JobRecord& job,
                                           const std::vector<StepPlacement>& layout,
                                           const StepGpuRequest& req, const HeldStepGpus& held,
                                           const GpuModelFn& model_of) {
  std::vector<StepGpus> out;
  bool busy = false;
  std::string busy_node;
  for (size_t i = 0; i < layout.size(); ++i) {
    const std::string& node = layout[i].node;
    uint32_t want = StepGpusWanted(req, i, layout.size(), layout[i].ranks.size());
    const NodeAlloc* a = AllocOn(job, node);
    StepGpus mine, avail;
    auto h = held.find(node);
    auto taken = [&](auto& list, const auto& x) {
      return h != held.end() && std::count(list.begin(), list.end(), x) > 0;
    };
    if (a) {
      for (uint32_t g : a->gpu_indices) {
        if (!req.type.empty() && model_of(node, g) != req.type) continue;
        mine.gpus.push_back(g);
        if (!(h != held.end() && taken(h->second.gpus, g))) avail.gpus.push_back(g);
      }
      for (const auto& u : a->mig_uuids) {
        if (!req.type.empty()) continue;  // typed: whole GPUs of that model only
        mine.migs.push_back(u);
        if (!(h != held.end() && taken(h->second.migs, u))) avail.migs.push_back(u);
      }
    }
    if (want > mine.size())
      return InvalidArgument("step asks " + Spec(req, want) + " on node " + node + " but job " +
                             std::to_string(job.job_id) + " has " +
                             std::to_string(mine.size()) +
                             (req.type.empty() ? "" : " " + req.type) + " there");
    if (want > avail.size() && !busy) busy = true, busy_node = node;
    StepGpus pick;
    for (uint32_t g : avail.gpus)
      if (pick.size() < want) pick.gpus.push_back(g);
    for (const auto& u : avail.migs)
      if (pick.size() < want) pick.migs.push_back(u);
    out.push_back(std::move(pick));
  }
  if (busy)
    return Status(Code::kResourceExhausted,
                  "Requested nodes are busy (the GPUs of job " + std::to_string(job.job_id) +
                      " on node " + busy_node + " are held by its other steps)");
  return out;
}

}  // namespace tessera::ctld
