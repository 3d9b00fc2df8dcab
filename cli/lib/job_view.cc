#include "cli/lib/job_view.h"

#include <set>

#include "common/duration.h"
#include "common/hostlist.h"

namespace tessera::cli {

JobState StateOf(const pb::JobInfo& job) { return static_cast<JobState>(job.state()); }

int64_t ElapsedSeconds(const pb::JobInfo& job, int64_t now) {
  JobState s = StateOf(job);
  if (job.start_time() <= 0 || s == JobState::kPending) return 0;
  int64_t end = IsFinished(s) && job.end_time() > 0 ? job.end_time() : now;
  return end > job.start_time() ? end - job.start_time() : 0;
}

uint32_t NodeCount(const pb::JobInfo& job) {
  if (job.alloc_size() > 0) return static_cast<uint32_t>(job.alloc_size());
  if (!job.nodelist().empty()) {
    auto hosts = ExpandHostlist(job.nodelist());
    if (hosts.ok() && !hosts->empty()) return static_cast<uint32_t>(hosts->size());
  }
  return job.spec().nodes_min() > 0 ? job.spec().nodes_min() : 1;
}

uint32_t TaskCount(const pb::JobInfo& job) {
  if (job.num_tasks() > 0) return job.num_tasks();
  uint32_t n = 0;
  for (const auto& g : job.spec().task_groups()) n += g.count();
  return n ? n : 1;
}

uint32_t CpuCount(const pb::JobInfo& job) {
  if (job.num_cpus() > 0) return job.num_cpus();
  uint32_t alloc = 0;
  for (const auto& a : job.alloc()) alloc += a.cpus();
  if (alloc) return alloc;
  uint32_t n = 0;
  for (const auto& g : job.spec().task_groups())
    n += g.count() * (g.per_task().cpus() ? g.per_task().cpus() : 1);
  return n ? n : 1;
}

std::string PartitionOf(const pb::JobInfo& job) {
  return job.partition().empty() ? job.spec().partition() : job.partition();
}

std::string AccountOf(const pb::JobInfo& job) {
  return job.account().empty() ? job.spec().account() : job.account();
}

int64_t TimeLimitOf(const pb::JobInfo& job) {
  return job.time_limit_s() != 0 ? job.time_limit_s() : job.spec().time_limit_s();
}

std::string GresOf(const pb::JobInfo& job) {
  std::set<std::string> items;
  for (const auto& g : job.spec().task_groups()) {
    const auto& pn = g.per_node();
    if (pn.gpus() == 0) continue;
    std::string s = "gres/gpu:";
    if (!pn.gpu_model().empty()) s += pn.gpu_model() + ":";
    items.insert(s + std::to_string(pn.gpus()));
  }
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::string TresOf(const pb::JobInfo& job) {
  uint64_t mem = 0;
  uint32_t gpus = 0;
  for (const auto& a : job.alloc()) {
    mem += a.mem_mib();
    gpus += static_cast<uint32_t>(a.gpu_indices_size() + a.mig_uuids_size());  // + MIG instances
  }
  if (job.alloc_size() == 0) {
    for (const auto& g : job.spec().task_groups()) {
      mem += g.per_task().mem_mib() * g.count() + g.per_node().mem_mib() * NodeCount(job);
      gpus += g.per_task().gpus() * g.count() + g.per_node().gpus() * NodeCount(job);
    }
  }
  std::string out = "cpu=" + std::to_string(CpuCount(job));
  if (mem) out += ",mem=" + FormatMemMiB(mem);
  out += ",node=" + std::to_string(NodeCount(job));
  out += ",billing=" + std::to_string(CpuCount(job));  // Slurm's default weights: one per CPU
  if (gpus) out += ",gres/gpu=" + std::to_string(gpus);
  return out;
}

int64_t EndTimeOf(const pb::JobInfo& job) {
  if (job.end_time() > 0) return job.end_time();
  int64_t limit = TimeLimitOf(job);
  if (StateOf(job) == JobState::kRunning && job.start_time() > 0 && limit > 0)
    return job.start_time() + limit;
  return 0;
}

std::string JobIdText(const pb::JobInfo& job) {
  if (job.array_job_id() == 0) return std::to_string(job.job_id());
  std::string base = std::to_string(job.array_job_id()) + "_";
  if (!job.array_task_str().empty()) return base + "[" + job.array_task_str() + "]";
  return base + std::to_string(job.array_task_id());
}

// The MIG profile the job asked for ("mig" when its groups name none or several).
std::string MigProfileOf(const pb::JobInfo& job) {
  std::set<std::string> models;
  for (const auto& g : job.spec().task_groups())
    for (const auto* r : {&g.per_task(), &g.per_node()})
      if (r->gpus() && !r->gpu_model().empty()) models.insert(r->gpu_model());
  return models.size() == 1 ? *models.begin() : "mig";
}

std::string GpuAllocText(const pb::JobInfo& job) {
  std::string out;
  for (const auto& a : job.alloc()) {
    if (a.gpu_indices_size() != 0) {
      std::string idx;
      for (uint32_t i : a.gpu_indices()) idx += (idx.empty() ? "" : ",") + std::to_string(i);
      out += (out.empty() ? "" : ",") + a.node() + ":gpu:" +
             std::to_string(a.gpu_indices_size()) + "(IDX:" + idx + ")";
    }
    if (a.mig_uuids_size() != 0) {  // MIG instances: "n1:gpu:1g.10gb:2(MIG-...,MIG-...)"
      std::string ids;
      for (const auto& u : a.mig_uuids()) ids += (ids.empty() ? "" : ",") + u;
      out += (out.empty() ? "" : ",") + a.node() + ":gpu:" + MigProfileOf(job) + ":" +
             std::to_string(a.mig_uuids_size()) + "(" + ids + ")";
    }
  }
  return out;
}

std::string CommandOf(const pb::JobInfo& job) {
  std::string out;
  for (const auto& a : job.spec().argv()) out += (out.empty() ? "" : " ") + a;
  return out.empty() ? "(null)" : out;
}

}  // namespace tessera::cli
