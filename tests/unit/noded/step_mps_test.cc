// Issue 14 (gpunode): a step asking GPUs sees only its own; MPS on every node of a multi-node mps job. A trun step's grant whose
// allocation here asks MPS starts (first use) the GPU's MPS daemon on that node and the tasks get
// its directories; the daemon stops once the job has left the node and its last user is gone;
// a batch job and the job's steps are counted apart; after a restart, a daemon of steps is
// stopped.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "../common/temp_dir.h"
#include "noded/mps_control.h"
#include "noded/step_service.h"
#include "noded/task_env.h"
#include "rpc/munge_codec.h"

namespace tessera::noded {
namespace {

namespace v1 = tessera::v1;

struct Calls {
  std::mutex mu;
  std::vector<std::string> log;
  std::vector<std::string> Take() {
    std::lock_guard<std::mutex> l(mu);
    return log;
  }
};

class FakeControl final : public MpsControl {
 public:
  explicit FakeControl(Calls& c, bool fail = false) : c_(c), fail_(fail) {}
  Status Start(uint32_t gpu, const std::string&, const MpsDirs&) override {
    if (fail_) return Unavailable("no driver");
    std::lock_guard<std::mutex> l(c_.mu);
    c_.log.push_back("start " + std::to_string(gpu));
    return Status::Ok();
  }
  Status Stop(uint32_t gpu, const std::string&, const MpsDirs&) override {
    std::lock_guard<std::mutex> l(c_.mu);
    c_.log.push_back("stop " + std::to_string(gpu));
    return Status::Ok();
  }

 private:
  Calls& c_;
  bool fail_;
};

std::vector<GpuInfo> Gpus() {
  std::vector<GpuInfo> g(2);
  for (uint32_t i = 0; i < 2; ++i) {
    g[i].index = i;
    g[i].uuid = "GPU-it2-" + std::to_string(i);
    g[i].memory_mib = 40960;
  }
  return g;
}

v1::StepGrant MpsGrant(uint64_t job, uint32_t step, uint32_t gpu, uint32_t pct) {
  v1::StepGrant g;
  g.set_job_id(job);
  g.set_step_id(step);
  g.add_ranks(1);
  g.set_node_index(1);
  g.set_ntasks(2);
  g.set_nodelist("it[1-2]");
  auto* a = g.mutable_alloc();
  a->set_node("it2");
  a->add_gpu_indices(gpu);
  a->set_mps_active_thread_percentage(pct);
  a->set_gpu_shared(true);
  return g;
}

class NoCodec final : public rpc::CredentialCodec {
 public:
  Result<std::string> Encode(const std::string&) const override { return Unavailable("none"); }
  Result<rpc::Identity> Decode(const std::string&) const override { return Unavailable("none"); }
};

}  // namespace

TEST_CASE("a step grant asking MPS starts the daemon on that node; the job's end stops it") {
  testing::TempDir dir;
  Calls calls;
  MpsServers mps("it2", dir.path() + "/mps", Gpus(), std::make_unique<FakeControl>(calls),
                 nullptr, [](const std::string&) {});
  StepGrants grants;
  NoCodec codec;
  StepServiceOptions opts{"it2", dir.path(), 1};
  opts.mps = &mps;
  StepService steps(opts, grants, codec, nullptr);
  steps.Grant(MpsGrant(5, 0, 1, 25));
  CHECK(calls.Take() == std::vector<std::string>{"start 1"});
  CHECK(mps.Active() == std::set<uint32_t>{1});
  steps.Grant(MpsGrant(5, 1, 1, 25));  // the job's next step: the same daemon
  steps.Grant(MpsGrant(6, 0, 1, 50));  // another job on the GPU
  CHECK(calls.Take().size() == 1);
  steps.StopJob(5);
  CHECK(calls.Take().size() == 1);  // job 6 still uses it
  steps.StopJob(6);
  CHECK(calls.Take() == std::vector<std::string>{"start 1", "stop 1"});
  CHECK(mps.Active().empty());
  steps.StopJob(6);  // again: nothing
  CHECK(calls.Take().size() == 2);

  v1::StepGrant whole = MpsGrant(7, 0, 0, 0);  // a whole-GPU job: no MPS
  steps.Grant(whole);
  CHECK(calls.Take().size() == 2);
}

TEST_CASE("the batch job and the job's steps use one daemon, each released on its own") {
  testing::TempDir dir;
  Calls calls;
  MpsServers mps("it2", dir.path() + "/mps", Gpus(), std::make_unique<FakeControl>(calls),
                 nullptr, [](const std::string&) {});
  v1::LaunchJob l;
  l.set_job_id(9);
  *l.add_alloc() = MpsGrant(9, 0, 0, 30).alloc();
  REQUIRE(mps.Prepare(&l).ok());
  REQUIRE(mps.PrepareStep(9, l.alloc(0)).ok());
  REQUIRE(mps.PrepareStep(9, l.alloc(0)).ok());
  mps.Release(9);  // the batch step ended; the job's steps here still run
  CHECK(mps.Active() == std::set<uint32_t>{0});
  mps.ReleaseStep(9);
  CHECK(calls.Take() == std::vector<std::string>{"start 0", "stop 0"});
}

TEST_CASE("steps' daemons left by a restart are stopped; batch jobs adopted keep theirs") {
  testing::TempDir dir;
  Calls calls;
  {
    MpsServers before("it2", dir.path() + "/mps", Gpus(), std::make_unique<FakeControl>(calls),
                      nullptr, [](const std::string&) {});
    REQUIRE(before.PrepareStep(3, MpsGrant(3, 0, 0, 30).alloc()).ok());
    REQUIRE(before.PrepareStep(4, MpsGrant(4, 0, 1, 30).alloc()).ok());
  }  // noded restarts: the grants (and these counts) are gone, the daemons still run
  MpsServers after("it2", dir.path() + "/mps", Gpus(), std::make_unique<FakeControl>(calls),
                   nullptr, [](const std::string&) {});
  v1::LaunchJob l;
  l.set_job_id(8);
  *l.add_alloc() = MpsGrant(8, 0, 1, 30).alloc();
  after.Adopt(l);  // a running batch job on GPU 1
  after.StopStale();
  CHECK(calls.Take() == std::vector<std::string>{"start 0", "start 1", "stop 0"});
  after.StopStale();  // GPU 0's daemon is known stopped now
  CHECK(calls.Take().size() == 3);
}

TEST_CASE("a daemon that will not start fails the job's steps here, naming why") {
  testing::TempDir dir;
  Calls calls;
  MpsServers mps("it2", dir.path() + "/mps", Gpus(), std::make_unique<FakeControl>(calls, true),
                 nullptr, [](const std::string&) {});
  CHECK(mps.PrepareStep(1, MpsGrant(1, 0, 0, 30).alloc()).message() ==
        "MPS control daemon of GPU 0 did not start: no driver");
  CHECK(mps.PrepareStep(1, MpsGrant(1, 0, 4, 30).alloc()).message() ==
        "MPS asked on GPU 4 of node it2, which has 2 GPUs");
  CHECK(mps.Active().empty());
}

TEST_CASE("a step task of an mps job gets this node's MPS directories, not the batch node's") {
  v1::RunTasksRequest req;
  (*req.mutable_env())["CUDA_MPS_PIPE_DIRECTORY"] = "/spool/it1/mps/gpu0/pipe";
  (*req.mutable_env())["CUDA_MPS_LOG_DIRECTORY"] = "/spool/it1/mps/gpu0/log";
  (*req.mutable_env())["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = "99";
  NodeFacts it2;
  it2.node_name = "it2";
  it2.gpu_uuids = {"GPU-it2-0", "GPU-it2-1"};
  MpsDirs dirs = MpsDirsFor("/spool/it2/mps", 1);
  it2.mps_pipe = dirs.pipe;
  it2.mps_log = dirs.log;
  auto env = BuildTaskEnv(req, MpsGrant(5, 0, 1, 25), 0, it2);
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "GPU-it2-1");
  CHECK(env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "25");
  CHECK(env["CUDA_MPS_PIPE_DIRECTORY"] == "/spool/it2/mps/gpu1/pipe");
  CHECK(env["CUDA_MPS_LOG_DIRECTORY"] == "/spool/it2/mps/gpu1/log");
  it2.mps_pipe.clear();
  it2.mps_log.clear();
  auto whole = BuildTaskEnv(req, MpsGrant(5, 0, 1, 0), 0, it2);
  CHECK(whole.count("CUDA_MPS_PIPE_DIRECTORY") == 0);
  CHECK(whole.count("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == 0);
}

TEST_CASE("the MPS servers are safe to use from the agent loop and step handlers at once") {
  testing::TempDir dir;
  Calls calls;
  MpsServers mps("it2", dir.path() + "/mps", Gpus(), std::make_unique<FakeControl>(calls),
                 nullptr, [](const std::string&) {});
  auto alloc = MpsGrant(1, 0, 0, 10).alloc();
  std::atomic<int> failures{0};  // Catch2's assertions are not for other threads
  std::thread a([&] {
    for (uint64_t j = 0; j < 200; ++j) failures += !mps.PrepareStep(j, alloc).ok();
  });
  std::thread b([&] {
    for (uint64_t j = 1000; j < 1200; ++j) {
      failures += !mps.PrepareStep(j, alloc).ok();
      mps.ReleaseStep(j);
    }
  });
  a.join();
  b.join();
  CHECK(failures == 0);
  for (uint64_t j = 0; j < 200; ++j) mps.ReleaseStep(j);
  auto log = calls.Take();
  REQUIRE(!log.empty());
  CHECK(log.back() == "stop 0");
  CHECK(mps.Active().empty());
  size_t starts = 0, stops = 0;
  for (const auto& l : log) (l == "start 0" ? starts : stops)++;
  CHECK(starts == stops);  // never two daemons, never a stop without a start
}

TEST_CASE("a step that asked GPUs sees only its own; SLURM_JOB_GPUS stays the job's") {
  v1::RunTasksRequest req;
  (*req.mutable_env())["CUDA_VISIBLE_DEVICES"] = "GPU-it1-0,GPU-it1-1";
  NodeFacts it2;
  it2.node_name = "it2";
  it2.gpu_uuids = {"GPU-it2-0", "GPU-it2-1", "GPU-it2-2"};
  v1::StepGrant g = MpsGrant(5, 1, 0, 0);
  g.mutable_alloc()->clear_gpu_indices();
  g.mutable_alloc()->add_gpu_indices(1);
  g.mutable_alloc()->add_gpu_indices(2);
  g.set_step_gpus_set(true);
  g.add_step_gpu_indices(2);
  auto env = BuildTaskEnv(req, g, 0, it2);
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "GPU-it2-2");
  CHECK(env["NVIDIA_VISIBLE_DEVICES"] == "GPU-it2-2");
  CHECK(env["SLURM_STEP_GPUS"] == "2");
  CHECK(env["GPU_DEVICE_ORDINAL"] == "2");
  CHECK(env["SLURM_GPUS_ON_NODE"] == "1");
  CHECK(env["SLURM_JOB_GPUS"] == "1,2");
  g.clear_step_gpu_indices();  // asked GPUs, none on this node (--gpus=1 over two nodes)
  auto none = BuildTaskEnv(req, g, 0, it2);
  CHECK(none.count("CUDA_VISIBLE_DEVICES") == 0);
  g.set_step_gpus_set(false);  // asked none: the job's GPUs here
  auto all = BuildTaskEnv(req, g, 0, it2);
  CHECK(all["CUDA_VISIBLE_DEVICES"] == "GPU-it2-1,GPU-it2-2");
}

}  // namespace tessera::noded
