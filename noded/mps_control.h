#pragma once
// The CUDA MPS control daemon per GPU (issue 14 §3, gres/mps). A job allocated `mps:N` of a GPU
// (NodeAllocation.mps_active_thread_percentage > 0, gpu_indices = the shared GPU) runs as an MPS
// client of that GPU's daemon. As the NVIDIA MPS documentation describes, each GPU's daemon has
// its own pipe and log directories (CUDA_MPS_PIPE_DIRECTORY / CUDA_MPS_LOG_DIRECTORY), is started
// with `nvidia-cuda-mps-control -d` (CUDA_VISIBLE_DEVICES = the GPU's UUID) and stopped with
// `echo quit | nvidia-cuda-mps-control` in the same environment.
//
//  - MpsControl starts/stops one GPU's daemon: NvidiaMpsControl runs the NVIDIA program (NVML
//    backend); SimulatedMpsControl (simulated GPUs) only records "start gpu=I uuid=U pipe=P" and
//    "stop gpu=I" lines in a file, for tests.
//  - MpsServers counts the users of each GPU's daemon: a batch job here (Prepare / Release, from
//    JobManager) and the trun steps of a job here (PrepareStep / ReleaseStep, from StepService:
//    on every node of a multi-node mps job, not only the batch node). The first user starts the
//    daemon, the last one's release stops it. Prepare also completes the job's launch:
//    mps_pinned_mem_mib = the GPU's memory x percent / 100 (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT),
//    and the environment gets CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY of that GPU
//    (steps get them from DirsFor). After a noded restart, Adopt re-counts the running batch
//    jobs without starting anything, and StopStale stops the daemons still marked running that
//    no adopted job uses (started for steps, whose grants a restart forgets).
// Directories: <root>/gpu<index>/pipe and <root>/gpu<index>/log (root: <spool>/mps), mode 0755;
// <root>/gpu<index>/running exists while the daemon runs (for StopStale).
// Thread-safe (one mutex; a daemon's start and stop run under it): the agent loop (JobManager,
// step grants) and the StepAgent handlers (a job's last step here ending) both use it.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "noded/gpu_backend.h"
#include "tessera/v1/agent.pb.h"

namespace tessera::noded {

struct MpsDirs {
  std::string pipe, log;
};
MpsDirs MpsDirsFor(const std::string& root, uint32_t gpu);

// An mps allocation's memory limit (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT): when unset,
// mps_pinned_mem_mib = memory of the shared GPU (gpu_indices[0]) x percent / 100. Batch launches
// get it from MpsServers::Prepare, trun steps' grants from StepService (same rule).
void CompleteMpsLimits(tessera::v1::NodeAllocation* a, const std::vector<uint64_t>& gpu_memory_mib);

class MpsControl {
 public:
  virtual ~MpsControl() = default;
  virtual Status Start(uint32_t gpu, const std::string& uuid, const MpsDirs& dirs) = 0;
  virtual Status Stop(uint32_t gpu, const std::string& uuid, const MpsDirs& dirs) = 0;
};

class NvidiaMpsControl final : public MpsControl {
 public:
  explicit NvidiaMpsControl(std::string program = "nvidia-cuda-mps-control")
      : program_(std::move(program)) {}
  Status Start(uint32_t gpu, const std::string& uuid, const MpsDirs& dirs) override;
  Status Stop(uint32_t gpu, const std::string& uuid, const MpsDirs& dirs) override;

 private:
  // Runs program_ with `args` in the GPU's MPS environment, `input` on its stdin.
  Status Run(const std::vector<std::string>& args, const std::string& uuid, const MpsDirs& dirs,
             const std::string& input);
  std::string program_;
};

class SimulatedMpsControl final : public MpsControl {
 public:
  explicit SimulatedMpsControl(std::string record_file) : file_(std::move(record_file)) {}
  Status Start(uint32_t gpu, const std::string& uuid, const MpsDirs& dirs) override;
  Status Stop(uint32_t gpu, const std::string& uuid, const MpsDirs& dirs) override;

 private:
  std::string file_;
};

class MpsServers {
 public:
  using LogFn = std::function<void(const std::string&)>;
  // `real` serves GPUs reported by NVML, `simulated` the simulated ones (either may be null:
  // mps jobs on such a GPU fail to launch with a message).
  MpsServers(std::string node, std::string root, std::vector<GpuInfo> gpus,
             std::unique_ptr<MpsControl> real, std::unique_ptr<MpsControl> simulated, LogFn log);

  // Whether `launch` asks for MPS on this node.
  bool Wants(const tessera::v1::LaunchJob& launch) const;
  // Counts the job on its GPU (starting the daemon for the first) and completes `launch` (see
  // above). An error (unknown GPU, daemon that will not start) changes nothing.
  Status Prepare(tessera::v1::LaunchJob* launch);
  // A job that runs since before a restart: counted, nothing started.
  void Adopt(const tessera::v1::LaunchJob& launch);
  // The job ended: the daemon of its GPU stops when it was the last. Unknown jobs: nothing.
  void Release(uint64_t job_id);
  // Whether this node's part of a step grant asks MPS (mps percent > 0 and a GPU).
  static bool StepWants(const tessera::v1::NodeAllocation& alloc);
  // A trun step of job `job_id` with this node's allocation `alloc` (StepWants) will run here:
  // the job's steps become a user of the GPU's daemon (started for the first user; repeated
  // calls for the job count once). An error (unknown GPU, daemon that will not start) changes
  // nothing.
  Status PrepareStep(uint64_t job_id, const tessera::v1::NodeAllocation& alloc);
  // The job's steps here are over (it ended and its last step here stopped): as Release.
  void ReleaseStep(uint64_t job_id);
  // After Adopt at start-up: daemons marked running that no user holds are stopped.
  void StopStale();
  // The MPS directories of GPU `gpu` (pure).
  MpsDirs DirsFor(uint32_t gpu) const { return MpsDirsFor(root_, gpu); }
  // GPUs whose daemon runs (for tests and logs).
  std::set<uint32_t> Active() const;

 private:
  using User = std::pair<uint64_t, bool>;  // (job id, its steps rather than its batch step)
  const tessera::v1::NodeAllocation* Mine(const tessera::v1::LaunchJob& launch) const;
  MpsControl* ControlFor(const GpuInfo& g) const;
  // Counts `user` on `gpu`, starting the daemon for the first. Under mu_.
  Status Acquire(User user, uint32_t gpu);
  void ReleaseUser(User user);  // under mu_
  void StopDaemon(uint32_t gpu, const std::string& why);  // under mu_
  std::string node_, root_;
  std::vector<GpuInfo> gpus_;
  std::unique_ptr<MpsControl> real_, simulated_;
  LogFn log_;
  mutable std::mutex mu_;
  std::map<uint32_t, std::set<User>> users_;  // GPU -> users of its daemon
  std::map<User, uint32_t> user_gpu_;
};

}  // namespace tessera::noded
