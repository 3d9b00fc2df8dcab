#pragma once
// The cgroups of one batch job on its node, as stepd (job_runner.cc) makes and removes them:
// the job's cgroup with its limits (cgroup.h) and the batch script's accounting cgroup
// (task_usage.h, issue 19). Shared with bench/cgroup (tessera-bench-cgroup), so that the
// benchmark of per-job cgroup cost runs the code jobs run.
//
// Contracts:
//  - Setup: creates the job's cgroup (failure: an error, nothing left) and the accounting
//    cgroup (failure: a warning; the script then runs without one).
//  - JoinFiles: the cgroup.procs files the job's child writes "0" to: the job's cgroup in each
//    hierarchy, except where it joins the accounting child instead (inside the job's cgroup).
//  - Teardown: SIGKILLs what is left in the job's cgroup and releases it (CgroupManager::Release:
//    v1 pools it for a later job, else removes it) with its children. After Teardown no
//    directory named for the job is left in any hierarchy (or the returned error says which).
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "noded/cgroup.h"
#include "noded/job_isolation.h"
#include "noded/task_usage.h"

namespace tessera::noded {

class BatchCgroups {
 public:
  // `iso.cgroup_root` must be non-empty.
  Status Setup(const JobIsolation& iso, std::vector<std::string>* warnings);
  CgroupManager* manager() const { return cgroup_.get(); }
  const std::string& name() const { return name_; }
  // nullptr when the script has no accounting cgroup.
  const TaskUsageCgroups* usage() const { return acct_.empty() ? nullptr : usage_.get(); }
  const std::string& acct() const { return acct_; }
  std::vector<std::string> JoinFiles() const;
  // `pool` false: removed even where it could be pooled (tessera-bench-cgroup's comparison).
  Status Teardown(bool pool = true);

 private:
  std::unique_ptr<CgroupManager> cgroup_;
  std::unique_ptr<TaskUsageCgroups> usage_;
  std::string name_, acct_;
};

}  // namespace tessera::noded
