// Issue 19 (h19 s7): srun --gpus-per-task / --gpu-bind on the node: each task's devices
// variables list only its GPUs of the step here (trun passes the binding as kTrunGpuBindEnv).
#include <catch2/catch.hpp>

#include "common/gpu_bind.h"
#include "noded/task_env.h"

namespace tessera::noded {
namespace {

namespace v1 = tessera::v1;

// A job with GPUs 0-3 on it1 and `ranks` of the step's tasks there.
v1::StepGrant Grant(std::vector<uint32_t> ranks, std::vector<uint32_t> step_gpus) {
  v1::StepGrant g;
  g.set_job_id(7);
  g.set_step_id(1);
  g.set_node_index(0);
  g.set_ntasks(static_cast<uint32_t>(ranks.size()));
  g.set_nodelist("it1");
  for (uint32_t r : ranks) g.add_ranks(r);
  auto* a = g.mutable_alloc();
  a->set_node("it1");
  a->set_cpus(4);
  for (uint32_t i : {0, 1, 2, 3}) a->add_gpu_indices(i);
  if (!step_gpus.empty()) {
    g.set_step_gpus_set(true);
    for (uint32_t i : step_gpus) g.add_step_gpu_indices(i);
  }
  return g;
}

v1::RunTasksRequest Req(const std::string& bind) {
  v1::RunTasksRequest r;
  (*r.mutable_env())["PATH"] = "/usr/bin";
  if (!bind.empty()) (*r.mutable_env())[kTrunGpuBindEnv] = bind;
  return r;
}

NodeFacts It1() {
  NodeFacts n;
  n.node_name = "it1";
  n.gpu_uuids = {"GPU-0", "GPU-1", "GPU-2", "GPU-3"};
  return n;
}

}  // namespace

TEST_CASE("trun --gpus-per-task: each task sees its own GPUs of the step, in index order",
          "[step][gpu_bind]") {
  // The step holds GPUs 3, 1 (as the controller gave them) for 2 tasks x 1.
  auto g = Grant({0, 1}, {3, 1});
  auto t0 = BuildTaskEnv(Req("per_task:1"), g, 0, It1());
  auto t1 = BuildTaskEnv(Req("per_task:1"), g, 1, It1());
  CHECK(t0["CUDA_VISIBLE_DEVICES"] == "GPU-1");
  CHECK(t0["NVIDIA_VISIBLE_DEVICES"] == "GPU-1");
  CHECK(t0["SLURM_STEP_GPUS"] == "1");
  CHECK(t0["GPU_DEVICE_ORDINAL"] == "1");
  CHECK(t1["CUDA_VISIBLE_DEVICES"] == "GPU-3");
  CHECK(t1["SLURM_STEP_GPUS"] == "3");
  CHECK(t1["TESSERA_STEP_GPUS"] == "3");
  CHECK(t1["SLURM_JOB_GPUS"] == "0,1,2,3");    // the job's, as Slurm
  CHECK(t1["SLURM_GPUS_ON_NODE"] == "2");      // the step's count here, as Slurm
  CHECK(t1.count(kTrunGpuBindEnv) == 0);       // trun's word to noded only
  // --gpu-bind=none: every task sees the step's GPUs.
  CHECK(BuildTaskEnv(Req("none"), g, 1, It1())["CUDA_VISIBLE_DEVICES"] == "GPU-1,GPU-3");
  // Without a binding (an older trun): as before, in the controller's order.
  CHECK(BuildTaskEnv(Req(""), g, 1, It1())["CUDA_VISIBLE_DEVICES"] == "GPU-3,GPU-1");
}

TEST_CASE("trun --gpu-bind over the job's GPUs, and not with a single task on the node",
          "[step][gpu_bind]") {
  auto g = Grant({0, 1, 2, 3}, {});  // a step without GPUs of its own: the job's 4
  auto map = BuildTaskEnv(Req("map_gpu:3,0"), g, 2, It1());
  CHECK(map["CUDA_VISIBLE_DEVICES"] == "GPU-3");
  CHECK(map["SLURM_STEP_GPUS"] == "3");
  CHECK(map["SLURM_JOB_GPUS"] == "0,1,2,3");
  CHECK(map["SLURM_GPUS_ON_NODE"] == "4");
  auto mask = BuildTaskEnv(Req("verbose,mask_gpu:0x3,0xc"), g, 1, It1());
  CHECK(mask["CUDA_VISIBLE_DEVICES"] == "GPU-2,GPU-3");
  CHECK(mask["SLURM_STEP_GPUS"] == "2,3");
  auto per2 = BuildTaskEnv(Req("per_task:2"), Grant({4, 5}, {}), 1, It1());  // local index 1
  CHECK(per2["CUDA_VISIBLE_DEVICES"] == "GPU-2,GPU-3");
  CHECK(per2["SLURM_PROCID"] == "5");
  auto alone = BuildTaskEnv(Req("per_task:1"), Grant({3}, {2, 0}), 0, It1());
  CHECK(alone["CUDA_VISIBLE_DEVICES"] == "GPU-0,GPU-2");  // slurmstepd: no binding for 1 task
  CHECK(alone["SLURM_STEP_GPUS"] == "0,2");
}

TEST_CASE("trun --gpu-bind with MIG slices: the slices come after the whole GPUs",
          "[step][gpu_bind]") {
  auto g = Grant({0, 1}, {});
  g.mutable_alloc()->clear_gpu_indices();
  g.mutable_alloc()->add_mig_uuids("MIG-a");
  g.mutable_alloc()->add_mig_uuids("MIG-b");
  CHECK(BuildTaskEnv(Req("per_task:1"), g, 1, It1())["CUDA_VISIBLE_DEVICES"] == "MIG-b");
}

}  // namespace tessera::noded
