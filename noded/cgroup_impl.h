#pragma once
// The two real CgroupManager implementations (see cgroup.h for the contracts). Internal to
// noded; use MakeCgroupManager.
#include "noded/cgroup.h"

namespace tessera::noded {

// v1: one directory per controller (cpuset, memory, devices, pids, freezer as mounted).
class CgroupV1 final : public CgroupManager {
 public:
  explicit CgroupV1(CgroupMounts m) : m_(std::move(m)) {}
  CgroupMode mode() const override { return CgroupMode::kV1; }
  Status Create(const CgroupSpec& spec) override;
  std::vector<std::string> ProcsFiles(const std::string& name) const override;
  Status AddPid(const std::string& name, pid_t pid) override;
  Result<std::vector<pid_t>> Procs(const std::string& name) override;
  Status KillAll(const std::string& name) override;
  Status Freeze(const std::string& name, bool frozen) override;  // issue 16 §4
  Result<bool> OomKilled(const std::string& name) override;
  Status Remove(const std::string& name) override;
  Status Release(const std::string& name) override;  // issue 20 §2: into the pool

 private:
  std::string Dir(const std::string& ctrl, const std::string& name) const;
  // The hierarchies a pooled cgroup spans, the deciding one first.
  std::vector<const char*> PoolHierarchies() const;
  // Renames a pooled cgroup to `name`; false when none could be taken (nothing changed then).
  bool Claim(const std::string& name);
  bool Has(const std::string& ctrl) const { return m_.v1.count(ctrl) > 0; }
  // Session 8: true when pids.current (the cgroup and its children) reads 0; false when it is
  // not 0 or cannot be read (then the caller reads the process list).
  bool EmptyByCounter(const std::string& name) const;
  Status MakeDirs(const std::string& ctrl, const std::string& name);
  // Creates only the leaf in every hierarchy (parents made on demand); kAlreadyExists when a
  // leaf is there already (a stale cgroup of a dead job).
  Status MakeLeaves(const CgroupSpec& spec);
  // `reused`: a pooled cgroup, whose earlier limits are overwritten or reset.
  Status ApplyLimits(const CgroupSpec& spec, bool reused);
  CgroupMounts m_;
  std::map<std::string, int64_t> oom_base_;  // reused cgroups: oom_kill count at Create
};

// v2: one directory; controllers enabled in every ancestor's cgroup.subtree_control; devices
// through a BPF_PROG_TYPE_CGROUP_DEVICE program (bpf_device.h).
class CgroupV2 final : public CgroupManager {
 public:
  explicit CgroupV2(CgroupMounts m) : m_(std::move(m)) {}
  CgroupMode mode() const override { return CgroupMode::kV2; }
  Status Create(const CgroupSpec& spec) override;
  std::vector<std::string> ProcsFiles(const std::string& name) const override;
  Status AddPid(const std::string& name, pid_t pid) override;
  Result<std::vector<pid_t>> Procs(const std::string& name) override;
  Status KillAll(const std::string& name) override;
  Status Freeze(const std::string& name, bool frozen) override;  // issue 16 §4
  Result<bool> OomKilled(const std::string& name) override;
  Status Remove(const std::string& name) override;
  std::vector<std::string> TakeWarnings() override { return std::move(warnings_); }

 private:
  std::string Dir(const std::string& name) const { return m_.unified + "/" + name; }
  // Session 8: cgroup.events says `populated 0` (the cgroup and its descendants).
  bool EmptyByCounter(const std::string& name) const;
  Status EnableControllers(const std::string& name);
  CgroupMounts m_;
  std::vector<std::string> warnings_;
};

}  // namespace tessera::noded
