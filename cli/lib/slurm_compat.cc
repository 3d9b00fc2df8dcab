#include "cli/lib/slurm_compat.h"

#include <algorithm>

#include "cli/lib/text_util.h"
#include "common/array_spec.h"
#include "common/duration.h"
#include "common/job_state.h"

namespace tessera::cli {

Result<std::vector<JobRef>> ParseJobRefList(std::string_view s) {
  std::vector<JobRef> refs;
  for (const std::string& piece : Split(s, ',')) {
    if (piece.empty()) continue;
    size_t us = piece.find('_');
    auto id = ParseUint(piece.substr(0, us), "job id");
    if (!id.ok() || *id == 0) return InvalidArgument("invalid job id \"" + piece + "\"");
    JobRef r;
    r.id = *id;
    r.text = piece;
    if (us != std::string::npos) {
      auto idx = ParseUint(piece.substr(us + 1), "array index");
      if (!idx.ok() || *idx > kMaxArrayIndex)
        return InvalidArgument("invalid job id \"" + piece + "\"");
      r.task = static_cast<uint32_t>(*idx);
    }
    refs.push_back(std::move(r));
  }
  if (refs.empty()) return InvalidArgument("invalid job id \"" + std::string(s) + "\"");
  return refs;
}

namespace {

bool RemainderHolds(const tessera::v1::JobInfo& job, uint32_t task) {
  if (job.array_task_str().empty()) return false;
  auto spec = ParseArraySpec(job.array_task_str());
  return spec.ok() && std::binary_search(spec->indices.begin(), spec->indices.end(), task);
}

}  // namespace

bool JobRefMatches(const JobRef& ref, const tessera::v1::JobInfo& job) {
  if (!ref.task) return job.job_id() == ref.id || job.array_job_id() == ref.id;
  if (job.array_job_id() != ref.id) return false;
  if (job.array_task_str().empty()) return job.array_task_id() == *ref.task;
  return RemainderHolds(job, *ref.task);
}

void NarrowRemainder(const std::vector<JobRef>& refs, tessera::v1::JobInfo& job) {
  if (job.array_task_str().empty()) return;
  std::vector<uint32_t> keep;
  for (const auto& r : refs) {
    if (r.id != job.array_job_id()) continue;
    if (!r.task) return;  // the whole array was asked for
    if (RemainderHolds(job, *r.task)) keep.push_back(*r.task);
  }
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  if (keep.empty()) return;
  if (keep.size() == 1) {
    job.set_array_task_id(keep[0]);
    job.set_array_task_str("");
    return;
  }
  job.set_array_task_str(FormatArrayIndices(keep, 0));
}

std::vector<uint64_t> RefIds(const std::vector<JobRef>& refs) {
  std::vector<uint64_t> ids;
  for (const auto& r : refs)
    if (std::find(ids.begin(), ids.end(), r.id) == ids.end()) ids.push_back(r.id);
  return ids;
}

Result<std::vector<uint64_t>> ResolveJobRefs(ControllerApi& api, const std::vector<JobRef>& refs) {
  std::vector<uint64_t> out;
  for (const auto& r : refs) {
    tessera::v1::ListJobsRequest req;
    req.add_job_ids(r.id);
    req.set_expand_arrays(true);  // each element with its own job id
    req.set_include_finished(true);
    auto resp = api.ListJobs(req);
    if (!resp.ok()) return resp.status();
    std::vector<uint64_t> elements, active;
    bool self = false;
    for (const auto& j : resp->jobs()) {
      if (!JobRefMatches(r, j)) continue;
      self = self || j.job_id() == r.id;
      if (j.array_job_id() != r.id) continue;
      elements.push_back(j.job_id());
      if (!IsFinished(static_cast<JobState>(j.state()))) active.push_back(j.job_id());
    }
    if (r.task) {
      if (elements.empty()) return NotFound("Invalid job id specified for job " + r.text);
      out.push_back(elements.front());
    } else if (elements.size() > 1) {
      const auto& pick = active.empty() ? elements : active;
      out.insert(out.end(), pick.begin(), pick.end());
    } else {
      (void)self;
      out.push_back(r.id);  // a plain job (or one the controller refuses with its own error)
    }
  }
  return out;
}

Result<std::vector<tessera::v1::JobInfo>> ListJobRefs(ControllerApi& api,
                                                      const std::vector<JobRef>& refs) {
  tessera::v1::ListJobsRequest req;
  for (uint64_t id : RefIds(refs)) req.add_job_ids(id);
  req.set_include_finished(true);
  auto resp = api.ListJobs(req);
  if (!resp.ok()) return resp.status();
  std::vector<tessera::v1::JobInfo> out;
  for (auto& j : *resp->mutable_jobs()) {
    if (std::none_of(refs.begin(), refs.end(), [&](const JobRef& r) { return JobRefMatches(r, j); }))
      continue;
    NarrowRemainder(refs, j);
    out.push_back(std::move(j));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.job_id() < b.job_id();
  });
  return out;
}

std::string SlurmReason(const tessera::v1::JobInfo& job) {
  if (!job.reason().empty() && job.reason() != "None") return job.reason();
  switch (static_cast<JobState>(job.state())) {
    case JobState::kFailed: return job.exit_code() != 0 ? "NonZeroExitCode" : "JobLaunchFailure";
    case JobState::kTimeout: return "TimeLimit";
    case JobState::kOutOfMemory: return "OutOfMemory";
    case JobState::kNodeFail: return "NodeDown";
    default: return "None";
  }
}

bool IsSlurmName(const std::string& prog) {
  static const char* const kNames[] = {"sbatch", "squeue", "scancel", "sinfo", "scontrol",
                                       "sacct",  "srun",   "salloc",  "sattach", "sstat",
                                       "sdiag"};  // issue 20 §3
  for (const char* n : kNames)
    if (prog == n) return true;
  return false;
}

}  // namespace tessera::cli
