// Issue 14: a trun step on every node of a job gets that node's own GPUs, HCAs and job cgroup
// (not the batch node's): the task environment from the grant's allocation, and StepCgroups.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "noded/job_env.h"
#include "noded/step_cgroups.h"
#include "noded/task_env.h"
#include "test_util.h"

namespace tessera::noded {
namespace {

namespace v1 = tessera::v1;

v1::StepGrant SecondNodeGrant(uint64_t job, std::vector<uint32_t> gpus) {
  v1::StepGrant g;
  g.set_job_id(job);
  g.set_step_id(0);
  g.set_uid(0);
  g.set_user("root");
  g.add_ranks(1);
  g.set_node_index(1);
  g.set_ntasks(2);
  g.set_nodelist("it[1-2]");
  auto* a = g.mutable_alloc();
  a->set_node("it2");
  a->set_cpus(1);
  a->set_mem_mib(64);
  for (uint32_t i : gpus) a->add_gpu_indices(i);
  a->set_tasks(1);
  return g;
}

// trun's environment is the batch job's, made on it1 (GPU 0 there).
v1::RunTasksRequest FromBatchNode() {
  v1::RunTasksRequest req;
  auto& env = *req.mutable_env();
  env["CUDA_VISIBLE_DEVICES"] = env["NVIDIA_VISIBLE_DEVICES"] = "GPU-it1-0";
  env["SLURM_JOB_GPUS"] = env["GPU_DEVICE_ORDINAL"] = "0";
  env["SLURM_GPUS_ON_NODE"] = "1";
  env["NCCL_IB_HCA"] = env["UCX_NET_DEVICES"] = "mlx5_0:1";
  env["PATH"] = "/usr/bin";
  return req;
}


}  // namespace

TEST_CASE("a task on the second node sees its own node's GPUs and HCAs, not the batch node's",
          "[step]") {
  NodeFacts it2;
  it2.node_name = "it2";
  it2.gpu_uuids = {"GPU-it2-0", "GPU-it2-1"};
  it2.hcas = {"mlx5_1:1"};
  auto env = BuildTaskEnv(FromBatchNode(), SecondNodeGrant(5, {1}), 0, it2);
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "GPU-it2-1");
  CHECK(env["NVIDIA_VISIBLE_DEVICES"] == "GPU-it2-1");
  CHECK(env["SLURM_JOB_GPUS"] == "1");
  CHECK(env["SLURM_STEP_GPUS"] == "1");
  CHECK(env["TESSERA_STEP_GPUS"] == "1");
  CHECK(env["GPU_DEVICE_ORDINAL"] == "1");
  CHECK(env["SLURM_GPUS_ON_NODE"] == "1");
  CHECK(env["NCCL_IB_HCA"] == "mlx5_1:1");
  CHECK(env["UCX_NET_DEVICES"] == "mlx5_1:1");
  CHECK(env["PATH"] == "/usr/bin");
  // Two GPUs here, no HCAs: the batch node's HCAs are not inherited either.
  it2.hcas.clear();
  auto two = BuildTaskEnv(FromBatchNode(), SecondNodeGrant(5, {0, 1}), 0, it2);
  CHECK(two["CUDA_VISIBLE_DEVICES"] == "GPU-it2-0,GPU-it2-1");
  CHECK(two["SLURM_STEP_GPUS"] == "0,1");
  CHECK(two["SLURM_GPUS_ON_NODE"] == "2");
  CHECK(two.count("NCCL_IB_HCA") == 0);
  // No GPU of the job on this node: none of the batch node's GPUs either.
  auto none = BuildTaskEnv(FromBatchNode(), SecondNodeGrant(5, {}), 0, it2);
  CHECK(none.count("CUDA_VISIBLE_DEVICES") == 0);
  CHECK(none.count("SLURM_JOB_GPUS") == 0);
  CHECK(none.count("SLURM_STEP_GPUS") == 0);
  CHECK(none.count("GPU_DEVICE_ORDINAL") == 0);
}

TEST_CASE("a grant without an allocation (older ctld) leaves trun's GPU variables", "[step]") {
  v1::StepGrant g = SecondNodeGrant(5, {1});
  g.clear_alloc();
  NodeFacts it2;
  it2.node_name = "it2";
  it2.gpu_uuids = {"GPU-it2-0", "GPU-it2-1"};
  auto env = BuildTaskEnv(FromBatchNode(), g, 0, it2);
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "GPU-it1-0");
  CHECK(env.count("SLURM_STEP_GPUS") == 0);
}

TEST_CASE("the batch job gets SLURM_JOB_GPUS, GPU_DEVICE_ORDINAL, NVIDIA_VISIBLE_DEVICES",
          "[step]") {
  v1::LaunchJob l;
  l.set_job_id(3);
  auto* a = l.add_alloc();
  a->set_node("it1");
  a->set_cpus(1);
  a->add_gpu_indices(2);
  a->add_gpu_indices(0);
  NodeFacts it1;
  it1.node_name = "it1";
  it1.gpu_uuids = {"GPU-a", "GPU-b", "GPU-c"};
  auto env = BuildJobEnv(l, it1, UserInfo{"root", "/root", "/bin/sh"});
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "GPU-c,GPU-a");
  CHECK(env["NVIDIA_VISIBLE_DEVICES"] == "GPU-c,GPU-a");
  CHECK(env["SLURM_JOB_GPUS"] == "2,0");
  CHECK(env["TESSERA_JOB_GPUS"] == "2,0");
  CHECK(env["GPU_DEVICE_ORDINAL"] == "2,0");
  CHECK(env.count("SLURM_STEP_GPUS") == 0);
}

TEST_CASE("StepCgroups: a non-batch node's job cgroup allows only its GPUs; removed at the end",
          "[step]") {
  CgroupMounts m = DetectCgroupsOnHost("/sys/fs/cgroup");
  if (::geteuid() != 0 || m.mode != CgroupMode::kV1 || !m.v1.count("devices") ||
      !m.v1.count("cpuset")) {
    WARN("SKIPPED: needs root and cgroup v1 devices + cpuset hierarchies");
    return;
  }
  testing::ScratchDir spool;
  IsolationFacts f;
  f.node_name = "it2";
  f.cgroup_root = "/sys/fs/cgroup";
  f.cgroup_parent = "tessera-unit-" + std::to_string(::getpid()) + "/it2";
  GpuInfo g0, g1;
  g0.index = 0, g0.minor = 0;
  g1.index = 1, g1.minor = 1;
  f.gpus = {g0, g1};
  IsolationPlanner planner(f, CoreMap({0}));
  StepCgroups cgroups(&planner, spool.path(), nullptr);
  cgroups.Prepare(SecondNodeGrant(8, {1}));
  auto iso = cgroups.Find(8);
  REQUIRE(iso);
  CHECK(iso->cgroup.name == f.cgroup_parent + "/job_8");
  std::string dev = m.v1.at("devices") + "/" + iso->cgroup.name;
  std::string rules = testing::ReadAll(dev + "/devices.list");
  CHECK(rules.find("c 195:1 rwm") != std::string::npos);
  CHECK(rules.find("c 195:0 ") == std::string::npos);
  CHECK(rules.find("a *:* rwm") == std::string::npos);
  CHECK(testing::ReadAll(m.v1.at("cpuset") + "/" + iso->cgroup.name + "/cpuset.cpus") == "0\n");
  CHECK(planner.cores().Free().empty());
  // A second grant of the job reuses it; a grant without an allocation makes none.
  cgroups.Prepare(SecondNodeGrant(8, {1}));
  v1::StepGrant old = SecondNodeGrant(9, {0});
  old.clear_alloc();
  cgroups.Prepare(old);
  CHECK_FALSE(cgroups.Find(9));
  // Not removed before the job ended; removed after, with the cores back.
  cgroups.Remove(8);
  CHECK(std::filesystem::exists(dev));
  cgroups.End(8);
  CHECK(planner.cores().Free() == std::vector<uint32_t>{0});
  cgroups.Remove(8);
  CHECK_FALSE(std::filesystem::exists(dev));
  CHECK_FALSE(cgroups.Find(8));
  for (const auto& [ctl, mount] : m.v1) {
    ::rmdir((mount + "/" + f.cgroup_parent).c_str());
    ::rmdir((mount + "/tessera-unit-" + std::to_string(::getpid())).c_str());
  }
}

TEST_CASE("StepCgroups: on the batch node the batch step's isolation file is used", "[step]") {
  testing::ScratchDir spool;
  std::filesystem::create_directories(spool.path() + "/job.4");
  JobIsolation batch;
  batch.hcas = {"mlx5_0:1"};
  std::ofstream(spool.path() + "/job.4/isolation") << FormatJobIsolation(batch);
  IsolationFacts f;
  f.node_name = "it1";
  IsolationPlanner planner(f, CoreMap({0, 1}));
  StepCgroups cgroups(&planner, spool.path(), nullptr);
  v1::StepGrant g = SecondNodeGrant(4, {});
  g.mutable_alloc()->set_node("it1");
  cgroups.Prepare(g);
  CHECK(planner.cores().Free() == std::vector<uint32_t>{0, 1});  // nothing planned here
  auto iso = cgroups.Find(4);
  REQUIRE(iso);
  CHECK(iso->hcas == std::vector<std::string>{"mlx5_0:1"});
}

}  // namespace tessera::noded
