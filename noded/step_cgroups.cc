#include "noded/step_cgroups.h"

#include <sys/stat.h>

#include "common/file_io.h"

namespace tessera::noded {

namespace v1 = tessera::v1;

StepCgroups::StepCgroups(IsolationPlanner* planner, std::string spool_root, LogFn log)
    : planner_(planner), spool_root_(std::move(spool_root)), log_(std::move(log)) {}

std::string StepCgroups::BatchFile(uint64_t job) const {
  return spool_root_ + "/job." + std::to_string(job) + "/isolation";
}

void StepCgroups::Prepare(const v1::StepGrant& g) {
  if (!planner_ || !g.has_alloc()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (jobs_.count(g.job_id())) return;
  }
  struct stat st{};
  if (::stat(BatchFile(g.job_id()).c_str(), &st) == 0) return;  // the batch node: stepd's
  v1::LaunchJob l;
  l.set_job_id(g.job_id());
  *l.add_alloc() = g.alloc();
  JobIsolation iso = planner_->Plan(l);
  std::string job = "job " + std::to_string(g.job_id());
  if (!iso.cgroup_root.empty()) {
    auto cg = MakeCgroupManager(DetectCgroupsOnHost(iso.cgroup_root));
    Status made = cg ? cg->Create(iso.cgroup)
                     : FailedPrecondition("no cgroup hierarchy under " + iso.cgroup_root);
    if (!made.ok()) {
      if (log_) log_(job + ": cannot create its step cgroup " + iso.cgroup.name + ": " +
                     made.message() + " (its steps run without one)");
      iso.cgroup_root.clear();
    } else if (log_) {
      for (const auto& w : cg->TakeWarnings()) log_(job + ": warning: " + w);
      log_(job + ": step cgroup " + iso.cgroup.name + ": cpus " + iso.cgroup.cpus + ", " +
           std::to_string(iso.cgroup.devices.size()) + " device rules");
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  jobs_[g.job_id()] = Entry{std::move(iso), false};
}

std::optional<JobIsolation> StepCgroups::Find(uint64_t job) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job);
    if (it != jobs_.end()) return it->second.iso;
  }
  auto text = ReadFile(BatchFile(job));
  if (!text.ok()) return std::nullopt;
  auto iso = ParseJobIsolation(*text);
  if (!iso.ok()) return std::nullopt;
  return *iso;
}

void StepCgroups::End(uint64_t job) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end() || it->second.ended) return;
  it->second.ended = true;
  if (planner_) planner_->Release(job);
}

void StepCgroups::Remove(uint64_t job) {
  JobIsolation iso;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end() || !it->second.ended) return;
    iso = std::move(it->second.iso);
    jobs_.erase(it);
  }
  if (iso.cgroup_root.empty()) return;
  auto cg = MakeCgroupManager(DetectCgroupsOnHost(iso.cgroup_root));
  if (!cg) return;
  (void)cg->KillAll(iso.cgroup.name);
  Status rm = cg->Release(iso.cgroup.name);  // issue 20 §2: v1 pools it (cgroup.h)
  if (log_) log_("job " + std::to_string(job) + ": step cgroup " + iso.cgroup.name +
                 (rm.ok() ? " released" : " not removed: " + rm.message()));
}

}  // namespace tessera::noded
