// Issue 14 (gpunode): trun --gres=gpu:N / --gpus=N / --gpus-per-task=N inside an allocation. A step
// gets a part of its job's GPUs on each of its nodes, never GPUs outside the job; steps asking
// GPUs get disjoint ones; a request larger than the job's is refused naming node and counts; a
// request the job could hold but its other steps use is "busy" (trun retries, as srun).
#include <catch2/catch.hpp>

#include <set>

#include "core_driven_controller.h"
#include "ctld/step_gpus.h"

using namespace tessera;
using namespace tessera::ctld;
using tessera::ctld::testing::CoreDrivenController;

namespace {

JobRecord Job(std::vector<std::pair<std::string, std::vector<uint32_t>>> nodes) {
  JobRecord j;
  j.job_id = 42;
  for (auto& [n, gpus] : nodes) {
    NodeAlloc a;
    a.node = n;
    a.gpu_indices = gpus;
    j.alloc.push_back(a);
  }
  return j;
}

std::vector<StepPlacement> Layout(std::vector<std::pair<std::string, size_t>> nodes) {
  std::vector<StepPlacement> out;
  uint32_t rank = 0;
  for (auto& [n, k] : nodes) {
    StepPlacement p{n, {}};
    for (size_t i = 0; i < k; ++i) p.ranks.push_back(rank++);
    out.push_back(p);
  }
  return out;
}

std::string Model(const std::string&, uint32_t gpu) { return gpu == 3 ? "t4" : "a100"; }

}  // namespace

TEST_CASE("step GPUs: per node, in all, per task; only the job's") {
  JobRecord j = Job({{"n1", {1, 3}}, {"n2", {0, 2}}});
  auto two = Layout({{"n1", 1}, {"n2", 1}});
  auto r = PickStepGpus(j, two, {1, 0, 0, ""}, {}, Model);
  REQUIRE(r.ok());
  CHECK((*r)[0].gpus == std::vector<uint32_t>{1});
  CHECK((*r)[1].gpus == std::vector<uint32_t>{0});
  r = PickStepGpus(j, two, {0, 3, 0, ""}, {}, Model);  // --gpus=3: 2 on n1, 1 on n2
  REQUIRE(r.ok());
  CHECK((*r)[0].gpus == std::vector<uint32_t>{1, 3});
  CHECK((*r)[1].gpus == std::vector<uint32_t>{0});
  r = PickStepGpus(j, Layout({{"n1", 2}}), {0, 0, 1, ""}, {}, Model);  // 2 tasks x 1
  REQUIRE(r.ok());
  CHECK((*r)[0].gpus == std::vector<uint32_t>{1, 3});
  r = PickStepGpus(j, two, {1, 0, 0, "t4"}, {}, Model);  // typed: n2 has no t4 of the job
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kInvalidArgument);
  CHECK(r.status().message() == "step asks 1 t4 GPU on node n2 but job 42 has 0 t4 there");
  r = PickStepGpus(j, Layout({{"n1", 1}}), {1, 0, 0, "t4"}, {}, Model);
  REQUIRE(r.ok());
  CHECK((*r)[0].gpus == std::vector<uint32_t>{3});
}

TEST_CASE("step GPUs: more than the job's is refused; held by other steps is busy") {
  JobRecord j = Job({{"n1", {1, 3}}, {"n2", {0, 2}}});
  auto two = Layout({{"n1", 1}, {"n2", 1}});
  auto r = PickStepGpus(j, two, {3, 0, 0, ""}, {}, Model);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kInvalidArgument);
  CHECK(r.status().message() == "step asks 3 GPUs on node n1 but job 42 has 2 there");
  HeldStepGpus held;
  held["n1"].gpus = {1};
  r = PickStepGpus(j, two, {1, 0, 0, ""}, held, Model);
  REQUIRE(r.ok());
  CHECK((*r)[0].gpus == std::vector<uint32_t>{3});  // not the held one
  held["n1"].gpus = {1, 3};
  r = PickStepGpus(j, two, {1, 0, 0, ""}, held, Model);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kResourceExhausted);
  CHECK(r.status().message().rfind("Requested nodes are busy", 0) == 0);
}

namespace {

struct TwoGpuNodes : CoreDrivenController {
  TwoGpuNodes()
      : CoreDrivenController(
            "NodeName=n1 NodeAddr=127.0.0.1 Port=7001 CPUs=4 RealMemory=1000 Gres=gpu:a100:2\n"
            "NodeName=n2 NodeAddr=127.0.0.1 Port=7002 CPUs=4 RealMemory=1000 Gres=gpu:a100:2\n"
            "PartitionName=p Nodes=n1,n2 Default=YES State=UP\n") {
    Register("n1", 2);
    Register("n2", 2);
  }
  uint64_t Submit(uint32_t nodes, uint32_t gpus) {
    JobSpec spec;
    spec.name = "gang";
    TaskGroupSpec g;
    g.name = "main";
    g.count = nodes;
    g.per_task.cpus = 1;
    g.tasks_per_node = 1;
    g.per_node.gpus = gpus;
    spec.task_groups.push_back(g);
    spec.nodes_min = spec.nodes_max = nodes;
    uint64_t id = CoreDrivenController::Submit(spec);
    RunUntil([&] { return ctl->jobs().Find(id)->State() == JobState::kRunning; });
    return id;
  }
};

}  // namespace

TEST_CASE("concurrent steps asking GPUs get disjoint ones; the grant says which") {
  TwoGpuNodes c;
  uint64_t id = c.Submit(2, 2);
  Caller root;
  root.admin = true;
  StepRequest one;
  one.gpus_per_node = 1;
  auto s1 = c.ctl->CreateStep(id, root, one, "a");
  auto s2 = c.ctl->CreateStep(id, root, one, "b");
  REQUIRE(s1.ok());
  REQUIRE(s2.ok());
  for (const std::string n : {"n1", "n2"}) {
    INFO(n);
    REQUIRE(c.links[n]->grants.size() == 2);
    const auto& g1 = c.links[n]->grants[0];
    const auto& g2 = c.links[n]->grants[1];
    CHECK(g1.step_gpus_set);
    CHECK(g1.alloc.gpu_indices.size() == 2);  // the job's whole part here (its cgroup)
    REQUIRE(g1.step_gpus.size() == 1);
    REQUIRE(g2.step_gpus.size() == 1);
    CHECK(g1.step_gpus != g2.step_gpus);
    std::set<uint32_t> job(g1.alloc.gpu_indices.begin(), g1.alloc.gpu_indices.end());
    CHECK(job.count(g1.step_gpus[0]));
    CHECK(job.count(g2.step_gpus[0]));
  }
  auto busy = c.ctl->CreateStep(id, root, one, "c");
  REQUIRE_FALSE(busy.ok());
  CHECK(busy.status().code() == Code::kResourceExhausted);
  StepRequest three;
  three.gpus_per_node = 3;
  auto big = c.ctl->CreateStep(id, root, three, "d");
  REQUIRE_FALSE(big.ok());
  CHECK(big.status().code() == Code::kInvalidArgument);
  CHECK(big.status().message().find("asks 3 GPUs on node n1 but job") != std::string::npos);
  // A step asking no GPUs still runs beside them (it sees the job's GPUs, holds none).
  REQUIRE(c.ctl->CreateStep(id, root, StepRequest{}, "e").ok());
  // The first step ends: its GPUs serve the next one.
  REQUIRE(c.ctl->CompleteStep(id, s1->step_id, root, JobState::kCompleted, 0, 0).ok());
  auto s3 = c.ctl->CreateStep(id, root, one, "f");
  REQUIRE(s3.ok());
  CHECK(c.links["n1"]->grants.back().step_gpus == c.links["n1"]->grants[0].step_gpus);
}
