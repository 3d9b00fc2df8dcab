// The MPS control daemon per GPU (issue 14 §3): started for a GPU's first mps job, stopped
// after its last; the launch gets the GPU's memory share and MPS directories.
#include <catch2/catch.hpp>

#include <vector>

#include "../common/temp_dir.h"
#include "common/env_block.h"
#include "common/file_io.h"
#include "noded/job_env.h"
#include "noded/mps_control.h"

using namespace tessera;
using namespace tessera::noded;

namespace {

struct Calls {
  std::vector<std::string> log;
};

class FakeControl final : public MpsControl {
 public:
  explicit FakeControl(Calls& c, bool fail = false) : c_(c), fail_(fail) {}
  Status Start(uint32_t gpu, const std::string& uuid, const MpsDirs& dirs) override {
    if (fail_) return Unavailable("no driver");
    c_.log.push_back("start " + std::to_string(gpu) + " " + uuid + " " + dirs.pipe);
    return Status::Ok();
  }
  Status Stop(uint32_t gpu, const std::string&, const MpsDirs&) override {
    c_.log.push_back("stop " + std::to_string(gpu));
    return Status::Ok();
  }

 private:
  Calls& c_;
  bool fail_;
};

std::vector<GpuInfo> Gpus(bool simulated) {
  std::vector<GpuInfo> g(2);
  for (uint32_t i = 0; i < 2; ++i) {
    g[i].index = i;
    g[i].uuid = "GPU-" + std::to_string(i);
    g[i].memory_mib = 40960;
    g[i].simulated = simulated;
  }
  return g;
}

tessera::v1::LaunchJob MpsJob(uint64_t id, uint32_t gpu, uint32_t pct) {
  tessera::v1::LaunchJob l;
  l.set_job_id(id);
  auto* a = l.add_alloc();
  a->set_node("n1");
  a->add_gpu_indices(gpu);
  a->set_mps_active_thread_percentage(pct);
  a->set_gpu_shared(true);
  EnvBlockSet(l.mutable_env_block(), "HOME", "/home/u");
  return l;
}

}  // namespace

TEST_CASE("the MPS daemon of a GPU starts with its first mps job and stops after its last") {
  testing::TempDir dir;
  Calls calls;
  std::vector<std::string> logs;
  MpsServers mps("n1", dir.path() + "/mps", Gpus(false), std::make_unique<FakeControl>(calls),
                 nullptr, [&](const std::string& m) { logs.push_back(m); });
  auto a = MpsJob(1, 1, 50), b = MpsJob(2, 1, 25);
  REQUIRE(mps.Wants(a));
  REQUIRE(mps.Prepare(&a).ok());
  REQUIRE(mps.Prepare(&b).ok());
  std::string pipe = dir.path() + "/mps/gpu1/pipe";
  CHECK(calls.log == std::vector<std::string>{"start 1 GPU-1 " + pipe});
  CHECK(mps.Active() == std::set<uint32_t>{1});
  // The launch carries the memory share and the MPS directories.
  CHECK(a.alloc(0).mps_pinned_mem_mib() == 20480);
  CHECK(b.alloc(0).mps_pinned_mem_mib() == 10240);
  auto env = EnvBlockToMap(a.env_block());
  CHECK(env["CUDA_MPS_PIPE_DIRECTORY"] == pipe);
  CHECK(env["CUDA_MPS_LOG_DIRECTORY"] == dir.path() + "/mps/gpu1/log");
  CHECK(env["HOME"] == "/home/u");
  mps.Release(1);
  CHECK(calls.log.size() == 1);
  mps.Release(2);
  CHECK(calls.log.back() == "stop 1");
  CHECK(mps.Active().empty());
  mps.Release(2);  // unknown now: nothing
  CHECK(calls.log.size() == 2);
}

TEST_CASE("after a restart running mps jobs are adopted; a daemon that will not start fails") {
  testing::TempDir dir;
  Calls calls;
  MpsServers mps("n1", dir.path(), Gpus(false), std::make_unique<FakeControl>(calls), nullptr,
                 [](const std::string&) {});
  mps.Adopt(MpsJob(7, 0, 30));
  CHECK(calls.log.empty());
  auto more = MpsJob(8, 0, 30);
  REQUIRE(mps.Prepare(&more).ok());
  CHECK(calls.log.empty());  // already running
  mps.Release(7);
  mps.Release(8);
  CHECK(calls.log == std::vector<std::string>{"stop 0"});

  MpsServers broken("n1", dir.path(), Gpus(false), std::make_unique<FakeControl>(calls, true),
                    nullptr, [](const std::string&) {});
  auto j = MpsJob(9, 0, 10);
  Status st = broken.Prepare(&j);
  CHECK(st.message() == "MPS control daemon of GPU 0 did not start: no driver");
  CHECK(broken.Active().empty());
  auto bad = MpsJob(10, 5, 10);
  CHECK(broken.Prepare(&bad).message() == "MPS asked on GPU 5 of node n1, which has 2 GPUs");
  tessera::v1::LaunchJob whole;
  whole.add_alloc()->set_node("n1");
  CHECK_FALSE(broken.Wants(whole));
}

TEST_CASE("simulated GPUs record the daemon's start and stop") {
  testing::TempDir dir;
  std::string file = dir.path() + "/mps-control.log";
  MpsServers mps("n1", dir.path() + "/mps", Gpus(true), nullptr,
                 std::make_unique<SimulatedMpsControl>(file), [](const std::string&) {});
  auto a = MpsJob(1, 0, 50);
  REQUIRE(mps.Prepare(&a).ok());
  mps.Release(1);
  auto text = ReadFile(file);
  REQUIRE(text.ok());
  CHECK(*text == "start gpu=0 uuid=GPU-0 pipe=" + dir.path() + "/mps/gpu0/pipe log=" + dir.path() +
                     "/mps/gpu0/log\nstop gpu=0\n");
}

TEST_CASE("an mps job's environment: thread percentage, memory limit, its shared GPU") {
  auto l = MpsJob(1, 1, 50);
  l.mutable_alloc(0)->set_mps_pinned_mem_mib(20480);
  EnvMap env;
  SetNodeGpuEnv(&l.alloc(0), {"GPU-0", "GPU-1"}, {}, env, nullptr, true);
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "GPU-1");
  CHECK(env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "50");
  CHECK(env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] == "0=20480M");
}

TEST_CASE("trun steps' grants get the same MPS memory limit as the batch launch") {
  auto l = MpsJob(1, 1, 25);
  tessera::v1::NodeAllocation a = l.alloc(0);
  CompleteMpsLimits(&a, {40960, 81920});
  CHECK(a.mps_pinned_mem_mib() == 20480);
  a.set_mps_pinned_mem_mib(100);  // already set: kept
  CompleteMpsLimits(&a, {40960, 81920});
  CHECK(a.mps_pinned_mem_mib() == 100);
  tessera::v1::NodeAllocation whole;
  whole.add_gpu_indices(0);
  CompleteMpsLimits(&whole, {40960});
  CHECK(whole.mps_pinned_mem_mib() == 0);
}
