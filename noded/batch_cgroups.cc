#include "noded/batch_cgroups.h"

namespace tessera::noded {

Status BatchCgroups::Setup(const JobIsolation& iso, std::vector<std::string>* warnings) {
  CgroupMounts mounts = DetectCgroupsOnHost(iso.cgroup_root);
  cgroup_ = MakeCgroupManager(mounts);
  if (!cgroup_) return Internal("no cgroup hierarchy is mounted under " + iso.cgroup_root);
  if (Status st = cgroup_->Create(iso.cgroup); !st.ok()) {
    cgroup_.reset();
    return st;
  }
  for (auto& w : cgroup_->TakeWarnings()) warnings->push_back(std::move(w));
  name_ = iso.cgroup.name;
  usage_ = std::make_unique<TaskUsageCgroups>(std::move(mounts));
  if (usage_->enabled()) {
    // One task: no task level under it (issue 20 §2: each level is a mkdir and an rmdir in
    // two hierarchies per job).
    // Session 8: a pooled job cgroup brings its batch child along (counters baselined).
    acct_ = name_ + "/" + kPooledAcctChild;
    if (Status us = usage_->CreateOrReset(acct_); !us.ok()) {
      warnings->push_back("no accounting cgroup for the batch script: " + us.message());
      acct_.clear();
    }
  }
  return Status::Ok();
}

std::vector<std::string> BatchCgroups::JoinFiles() const {
  std::vector<std::string> out;
  if (!cgroup_) return out;
  std::vector<std::string> acct = acct_.empty() ? out : usage_->ProcsFiles(acct_);
  // Joining the accounting child of a hierarchy puts the process under the job's cgroup there
  // too (its limits apply to the whole subtree): one cgroup.procs write per hierarchy, not two.
  for (auto& f : cgroup_->ProcsFiles(name_)) {
    std::string dir = f.substr(0, f.rfind('/') + 1);
    bool covered = false;
    for (const auto& a : acct) covered = covered || a.rfind(dir, 0) == 0;
    if (!covered) out.push_back(std::move(f));
  }
  out.insert(out.end(), acct.begin(), acct.end());
  return out;
}

Status BatchCgroups::Teardown(bool pool) {
  if (!cgroup_) return Status::Ok();
  (void)cgroup_->KillAll(name_);
  // Issue 20 §2: v1 keeps it for the next job.
  Status st = pool ? cgroup_->Release(name_) : cgroup_->Remove(name_);
  cgroup_.reset();
  return st;
}

}  // namespace tessera::noded
