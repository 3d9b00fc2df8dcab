// Controller: job steps (trun). Split from controller.cc; same class, same core-thread rule.
#include <algorithm>

#include "common/hostlist.h"
#include "ctld/controller.h"

namespace tessera::ctld {

Result<Controller::StepReply> Controller::CreateStep(uint64_t job_id, const Caller& c,
                                                    const StepRequest& req, const std::string& name) {
  JobRecord* j = jobs_.Find(job_id);
  if (!j) return NotFound("Invalid job id specified: " + std::to_string(job_id));
  if (!c.MayControl(*j)) return PermissionDenied("Access/permission denied: job " + std::to_string(job_id) + " belongs to another user");
  if (j->State() != JobState::kRunning) return FailedPrecondition("Job " + std::to_string(job_id) + " is not running");
  auto layout = LayoutStep(*j, req);
  if (!layout.ok()) return layout.status();
  auto step_gpus = PickGpusForStep(*j, req, *layout);  // a part of the job's GPUs (gpunode)
  if (!step_gpus.ok()) return step_gpus.status();
  StepReply reply;
  std::vector<std::string> names;
  std::vector<NodeAlloc> allocs;  // each node's own GPUs/CPUs/memory, for its grant
  for (const auto& p : *layout) {
    auto a = StepNodeAlloc(*j, p.node);
    if (!a.ok()) return a.status();
    allocs.push_back(*a);
    NodeRuntime* n = nodes_.Find(p.node);
    if (!n || !n->link) return Unavailable("node " + p.node + " of job " + std::to_string(job_id) + " is not connected");
    reply.nodes.push_back(n->config);
    reply.ntasks += static_cast<uint32_t>(p.ranks.size());
    names.push_back(p.node);
  }
  reply.layout = *layout;
  reply.nodelist = CompressHostlist(names);
  reply.master_addr = reply.nodes.front()->addr;
  StepRecord step;
  step.job_id = job_id;
  step.name = name;
  step.nodelist = reply.nodelist;
  step.ntasks = reply.ntasks;
  step.ncpus = reply.ntasks * std::max<uint32_t>(1, req.cpus_per_task);
  step.start_time = clock_->Now();
  auto step_id = jobs_.AddStep(job_id, step);  // durable before any node hears of it
  if (!step_id.ok()) return step_id.status();
  step.step_id = *step_id;
  reply.step_id = step.step_id;
  reply.master_port = static_cast<uint32_t>(20000 + (job_id * 16 + step.step_id) % 30000);
  for (size_t i = 0; i < reply.layout.size(); ++i) {
    NodeLink::Grant g{job_id, step.step_id, j->uid, j->gid, j->user, reply.layout[i].ranks,
                      static_cast<uint32_t>(i), reply.ntasks, std::max<uint32_t>(1, req.cpus_per_task),
                      reply.nodelist, reply.master_addr, reply.master_port, allocs[i], false, {}, {}};
    if (!step_gpus->empty()) {
      g.step_gpus_set = true;
      g.step_gpus = (*step_gpus)[i].gpus;
      g.step_migs = (*step_gpus)[i].migs;
      step_gpus_[{job_id, step.step_id}][reply.layout[i].node] = (*step_gpus)[i];
    }
    nodes_.Find(reply.layout[i].node)->link->GrantStep(g);
  }
  steps_[{job_id, step.step_id}] = step;
  return reply;
}

Status Controller::CompleteStep(uint64_t job_id, uint32_t step_id, const Caller& c, JobState state,
                                int32_t exit_code, int32_t exit_signal, std::string usage) {
  auto it = steps_.find({job_id, step_id});
  if (it == steps_.end()) return NotFound("no running step " + std::to_string(job_id) + "." + std::to_string(step_id));
  JobRecord* j = jobs_.Find(job_id);
  uint32_t owner = j ? j->uid : c.uid;
  if (!c.admin && c.uid != owner) return PermissionDenied("Access/permission denied");
  StepRecord s = it->second;
  s.state = static_cast<int>(state);
  s.exit_code = exit_code;
  s.exit_signal = exit_signal;
  s.end_time = clock_->Now();
  s.usage = std::move(usage);
  TESSERA_RETURN_IF_ERROR(jobs_.FinishStepDurably(s));
  steps_.erase(it);
  step_gpus_.erase({job_id, step_id});
  return Status::Ok();
}

Result<std::vector<StepGpus>> Controller::PickGpusForStep(
    const JobRecord& j, const StepRequest& req, const std::vector<StepPlacement>& layout) {
  StepGpuRequest want{req.gpus_per_node, req.gpus, req.gpus_per_task, req.gpu_type};
  if (!want.Any()) return std::vector<StepGpus>{};
  HeldStepGpus held;  // by the job's running steps (a step ended with its job is gone too)
  for (auto it = step_gpus_.lower_bound({j.job_id, 0});
       it != step_gpus_.end() && it->first.first == j.job_id;) {
    if (!steps_.count(it->first)) {
      it = step_gpus_.erase(it);
      continue;
    }
    for (const auto& [node, g] : it->second) {
      held[node].gpus.insert(held[node].gpus.end(), g.gpus.begin(), g.gpus.end());
      held[node].migs.insert(held[node].migs.end(), g.migs.begin(), g.migs.end());
    }
    ++it;
  }
  return PickStepGpus(j, layout, want, held, [this](const std::string& node, uint32_t gpu) {
    NodeRuntime* n = nodes_.Find(node);
    if (n)
      for (const auto& g : n->gpus)
        if (g.index == gpu) return g.model;
    return std::string();
  });
}

}  // namespace tessera::ctld
