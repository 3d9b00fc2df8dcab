#include "noded/mps_control.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/env_block.h"

namespace tessera::noded {

namespace v1 = tessera::v1;

namespace {

// mkdir -p with `mode` for each directory it creates.
Status MakeDirs(const std::string& path, mode_t mode) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    std::string part = path.substr(0, pos);
    if (::mkdir(part.c_str(), mode) != 0 && errno != EEXIST)
      return Internal("cannot create " + part + ": " + std::strerror(errno));
  }
  ::chmod(path.c_str(), mode);
  return Status::Ok();
}

Status AppendLine(const std::string& file, const std::string& line) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Internal("cannot open " + file + ": " + std::strerror(errno));
  std::string text = line + "\n";
  ssize_t n = ::write(fd, text.data(), text.size());
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) return Internal("cannot write " + file);
  return Status::Ok();
}

}  // namespace

void CompleteMpsLimits(v1::NodeAllocation* a, const std::vector<uint64_t>& gpu_memory_mib) {
  if (a->mps_active_thread_percentage() == 0 || a->mps_pinned_mem_mib() != 0 ||
      a->gpu_indices_size() == 0 || a->gpu_indices(0) >= gpu_memory_mib.size())
    return;
  uint32_t pct = std::min<uint32_t>(a->mps_active_thread_percentage(), 100);
  a->set_mps_pinned_mem_mib(gpu_memory_mib[a->gpu_indices(0)] * pct / 100);
}

MpsDirs MpsDirsFor(const std::string& root, uint32_t gpu) {
  std::string base = root + "/gpu" + std::to_string(gpu);
  return {base + "/pipe", base + "/log"};
}

Status NvidiaMpsControl::Run(const std::vector<std::string>& args, const std::string& uuid,
                             const MpsDirs& dirs, const std::string& input) {
  int in[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(in[0]), ::close(in[1]);
    return Internal(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::setenv("CUDA_VISIBLE_DEVICES", uuid.c_str(), 1);
    ::setenv("CUDA_MPS_PIPE_DIRECTORY", dirs.pipe.c_str(), 1);
    ::setenv("CUDA_MPS_LOG_DIRECTORY", dirs.log.c_str(), 1);
    std::vector<char*> argv{const_cast<char*>(program_.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(program_.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  if (!input.empty()) (void)!::write(in[1], input.data(), input.size());
  ::close(in[1]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return Unavailable(program_ + " not found (is the NVIDIA driver installed?)");
  return Internal(program_ + " failed (status " + std::to_string(status) + ")");
}

Status NvidiaMpsControl::Start(uint32_t, const std::string& uuid, const MpsDirs& dirs) {
  return Run({"-d"}, uuid, dirs, "");
}

Status NvidiaMpsControl::Stop(uint32_t, const std::string& uuid, const MpsDirs& dirs) {
  return Run({}, uuid, dirs, "quit\n");
}

Status SimulatedMpsControl::Start(uint32_t gpu, const std::string& uuid, const MpsDirs& dirs) {
  return AppendLine(file_, "start gpu=" + std::to_string(gpu) + " uuid=" + uuid +
                               " pipe=" + dirs.pipe + " log=" + dirs.log);
}

Status SimulatedMpsControl::Stop(uint32_t gpu, const std::string&, const MpsDirs&) {
  return AppendLine(file_, "stop gpu=" + std::to_string(gpu));
}

MpsServers::MpsServers(std::string node, std::string root, std::vector<GpuInfo> gpus,
                       std::unique_ptr<MpsControl> real, std::unique_ptr<MpsControl> simulated,
                       LogFn log)
    : node_(std::move(node)), root_(std::move(root)), gpus_(std::move(gpus)),
      real_(std::move(real)), simulated_(std::move(simulated)), log_(std::move(log)) {}

const v1::NodeAllocation* MpsServers::Mine(const v1::LaunchJob& l) const {
  for (const auto& a : l.alloc())
    if (a.node() == node_ && a.mps_active_thread_percentage() > 0 && a.gpu_indices_size() > 0)
      return &a;
  return nullptr;
}

bool MpsServers::Wants(const v1::LaunchJob& l) const { return Mine(l) != nullptr; }

MpsControl* MpsServers::ControlFor(const GpuInfo& g) const {
  return g.simulated ? simulated_.get() : real_.get();
}

Status MpsServers::Acquire(User user, uint32_t gpu) {
  if (gpu >= gpus_.size())
    return FailedPrecondition("MPS asked on GPU " + std::to_string(gpu) + " of node " + node_ +
                              ", which has " + std::to_string(gpus_.size()) + " GPUs");
  if (auto it = user_gpu_.find(user); it != user_gpu_.end()) return Status::Ok();  // counted
  const GpuInfo& g = gpus_[gpu];
  MpsDirs dirs = MpsDirsFor(root_, gpu);
  auto& users = users_[gpu];
  if (users.empty()) {
    MpsControl* c = ControlFor(g);
    if (!c) return FailedPrecondition("no MPS control for GPU " + std::to_string(gpu));
    TESSERA_RETURN_IF_ERROR(MakeDirs(dirs.pipe, 0755));
    TESSERA_RETURN_IF_ERROR(MakeDirs(dirs.log, 0755));
    Status st = c->Start(gpu, g.uuid, dirs);
    if (!st.ok())
      return Status(st.code(), "MPS control daemon of GPU " + std::to_string(gpu) +
                                   " did not start: " + st.message());
    (void)AppendLine(root_ + "/gpu" + std::to_string(gpu) + "/running", "");
    log_("MPS control daemon of GPU " + std::to_string(gpu) + " started (pipe " + dirs.pipe +
         ")" + (user.second ? " for the steps of job " + std::to_string(user.first) : ""));
  }
  users.insert(user);
  user_gpu_[user] = gpu;
  return Status::Ok();
}

Status MpsServers::Prepare(v1::LaunchJob* l) {
  const v1::NodeAllocation* mine = Mine(*l);
  if (!mine) return Status::Ok();
  uint32_t gpu = mine->gpu_indices(0);
  {
    std::lock_guard<std::mutex> lock(mu_);
    TESSERA_RETURN_IF_ERROR(Acquire({l->job_id(), false}, gpu));
  }
  std::vector<uint64_t> memory;
  for (const auto& x : gpus_) memory.push_back(x.memory_mib);
  for (auto& a : *l->mutable_alloc())
    if (&a == mine) CompleteMpsLimits(&a, memory);
  MpsDirs dirs = MpsDirsFor(root_, gpu);
  auto set = [&](const std::string& k, const std::string& v) {
    if (l->env_block().empty()) (*l->mutable_env())[k] = v;
    else EnvBlockSet(l->mutable_env_block(), k, v);
  };
  set("CUDA_MPS_PIPE_DIRECTORY", dirs.pipe);
  set("CUDA_MPS_LOG_DIRECTORY", dirs.log);
  return Status::Ok();
}

void MpsServers::Adopt(const v1::LaunchJob& l) {
  const v1::NodeAllocation* mine = Mine(l);
  if (!mine) return;
  std::lock_guard<std::mutex> lock(mu_);
  User user{l.job_id(), false};
  users_[mine->gpu_indices(0)].insert(user);
  user_gpu_[user] = mine->gpu_indices(0);
}

void MpsServers::StopDaemon(uint32_t gpu, const std::string& why) {
  if (gpu >= gpus_.size()) return;
  MpsControl* c = ControlFor(gpus_[gpu]);
  if (!c) return;
  Status st = c->Stop(gpu, gpus_[gpu].uuid, MpsDirsFor(root_, gpu));
  ::unlink((root_ + "/gpu" + std::to_string(gpu) + "/running").c_str());
  log_("MPS control daemon of GPU " + std::to_string(gpu) +
       (st.ok() ? " stopped (" + why + ")" : " did not stop: " + st.message()));
}

void MpsServers::ReleaseUser(User user) {
  auto it = user_gpu_.find(user);
  if (it == user_gpu_.end()) return;
  uint32_t gpu = it->second;
  user_gpu_.erase(it);
  auto& users = users_[gpu];
  users.erase(user);
  if (!users.empty()) return;
  users_.erase(gpu);
  StopDaemon(gpu, "its last job ended");
}

void MpsServers::Release(uint64_t job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ReleaseUser({job_id, false});
}

bool MpsServers::StepWants(const v1::NodeAllocation& a) {
  return a.mps_active_thread_percentage() > 0 && a.gpu_indices_size() > 0;
}

Status MpsServers::PrepareStep(uint64_t job_id, const v1::NodeAllocation& a) {
  if (!StepWants(a)) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  return Acquire({job_id, true}, a.gpu_indices(0));
}

void MpsServers::ReleaseStep(uint64_t job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ReleaseUser({job_id, true});
}

void MpsServers::StopStale() {
  std::lock_guard<std::mutex> lock(mu_);
  for (uint32_t gpu = 0; gpu < gpus_.size(); ++gpu) {
    std::string marker = root_ + "/gpu" + std::to_string(gpu) + "/running";
    if (::access(marker.c_str(), F_OK) != 0 || users_.count(gpu)) continue;
    StopDaemon(gpu, "no job here uses it since noded's restart");
  }
}

std::set<uint32_t> MpsServers::Active() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<uint32_t> out;
  for (const auto& [gpu, users] : users_)
    if (!users.empty()) out.insert(gpu);
  return out;
}

}  // namespace tessera::noded
