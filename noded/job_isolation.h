#pragma once
// What isolates one job: its cgroup (cores, memory, pids, devices) and its RDMA HCAs. noded
// plans it at launch (IsolationPlanner) and writes it to <job dir>/isolation; stepd reads it,
// creates the cgroup, puts the job in it and gives the job the HCAs' environment. After a noded
// restart the planner's core map is restored from these files.
//
// File format (key=value lines, written atomically):
//   cgroup_root=/sys/fs/cgroup      ("" or absent: no cgroup)
//   cgroup=tessera/<node>-<spool hash>/job_<id>
//   cpus=0-1  memory_bytes=52428800  pids_max=4096  restrict_devices=1
//   device=c 1:3 rwm                 (one line per allowed device rule)
//   hca=mlx5_0:1                     (one line per HCA port)
//   netdev=eth2                      (one line per RoCE network interface of those ports)
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "noded/cgroup.h"
#include "noded/core_map.h"
#include "noded/gpu_backend.h"
#include "noded/rdma.h"
#include "tessera/v1/agent.pb.h"

namespace tessera::noded {

struct JobIsolation {
  std::string cgroup_root;
  CgroupSpec cgroup;
  std::vector<std::string> hcas;
  std::vector<std::string> netdevs;  // RoCE interfaces of the HCA ports (NCCL_SOCKET_IFNAME)
};

std::string FormatJobIsolation(const JobIsolation& iso);
// Errors name the line.
Result<JobIsolation> ParseJobIsolation(const std::string& text);

struct IsolationFacts {
  std::string node_name;
  std::string cgroup_root;              // "" = cgroups off (not root, or no cgroup mounted)
  std::string cgroup_parent;            // "tessera/<node>-<spool hash>" (CgroupParentFor)
  uint64_t pids_max = 0;                // 0 = no limit
  std::vector<GpuInfo> gpus;
  std::vector<RdmaPort> hcas;
  std::vector<DeviceRule> gpu_shared_devices;  // nvidiactl, nvidia-uvm(-tools), nvidia-modeset
  // Per MIG instance (UUID): its nvidia-caps GI and CI access devices (noded/mig_caps.h). Never
  // the whole /dev/nvidia-caps directory: a job opens only its own instances.
  std::map<std::string, std::vector<DeviceRule>> mig_devices;
  std::string nvidia_proc = "/proc";  // NvidiaProcRoot= (where mig_devices are read)
  std::vector<DeviceRule> rdma_devices;        // /dev/infiniband/* (all of them)
  // /dev/infiniband/<name> -> its rule ("uverbs0", "umad1", "rdma_cm"); see PlanJobIsolation.
  std::map<std::string, DeviceRule> rdma_devices_by_name;
};

// Pure: the isolation of `launch` on this node given its cores. Devices: the standard set, the
// allocated GPUs (/dev/nvidia<minor>, c 195:<minor>; MIG slices need their parent GPU and their
// own mig_devices) plus gpu_shared_devices when any GPU is allocated; when HCAs are given, only
// their own /dev/infiniband devices (RdmaPort::char_devices found in rdma_devices_by_name) plus
// rdma_cm, or all rdma_devices when discovery named no device of theirs. HCAs: the ports
// closest to the job's GPUs (ChooseHcas), with the RoCE interfaces of those ports in `netdevs`.
// Memory: this node's alloc mem_mib.
JobIsolation PlanJobIsolation(const tessera::v1::LaunchJob& launch, const IsolationFacts& facts,
                              const std::vector<uint32_t>& cores);

// Character devices in `dir` (not recursive) as "c major:minor rwm" rules; missing dir = none.
std::vector<DeviceRule> CharDeviceRules(const std::string& dir, const std::string& prefix = "");
// The same by file name.
std::map<std::string, DeviceRule> CharDeviceRulesByName(const std::string& dir);

// "tessera/<node>-<8 hex digits of a hash of the spool dir>".
std::string CgroupParentFor(const std::string& node, const std::string& spool_dir);

class IsolationPlanner {
 public:
  IsolationPlanner(IsolationFacts facts, CoreMap cores)
      : facts_(std::move(facts)), cores_(std::move(cores)) {}
  // Thread-safe: batch launches and trun step grants plan from different threads.
  JobIsolation Plan(const tessera::v1::LaunchJob& launch);
  void Restore(uint64_t job, const JobIsolation& iso);
  void Release(uint64_t job) {
    std::lock_guard<std::mutex> lock(mu_);
    cores_.Release(job);
  }
  // A GPU's MIG layout changed (GpuManager::SetLayoutListener): later plans know its new
  // instances (parent GPU and nvidia-caps devices, read under facts.nvidia_proc).
  void UpdateGpu(const GpuInfo& gpu);
  const CoreMap& cores() const { return cores_; }
  const IsolationFacts& facts() const { return facts_; }  // fixed but for UpdateGpu's GPUs

 private:
  std::mutex mu_;
  IsolationFacts facts_;
  CoreMap cores_;
};

}  // namespace tessera::noded
