// Issue 14 §4: an XID on a GPU a running gang holds applies its partition's GpuFailurePolicy.
// requeue: both nodes are told to stop the job, which is requeued when its batch node reports
// the end and does not start again while the GPU is drained; fail: it ends FAILED naming the
// GPU; ignore: it runs on. Every case records a gpu_failure event and drains the GPU.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core_driven_controller.h"

using namespace tessera;
using namespace tessera::ctld;
using tessera::ctld::testing::CoreDrivenController;

namespace {

struct Gang : CoreDrivenController {
  explicit Gang(const std::string& policy)
      : CoreDrivenController(
            "NodeName=n1 NodeAddr=127.0.0.1 Port=7001 CPUs=2 RealMemory=1000 Gres=gpu:a100:2\n"
            "NodeName=n2 NodeAddr=127.0.0.1 Port=7002 CPUs=2 RealMemory=1000 Gres=gpu:a100:2\n"
            "PartitionName=p Nodes=n1,n2 Default=YES State=UP" +
            (policy.empty() ? std::string() : " GpuFailurePolicy=" + policy) + "\n") {
    Register("n1", 2);
    Register("n2", 2);
  }

  uint64_t SubmitGang() {  // tbatch -N2 --ntasks-per-node=1 --gpus-per-node=2
    JobSpec spec;
    TaskGroupSpec g;
    g.name = "main";
    g.count = 2;
    g.per_task.cpus = 1;
    g.tasks_per_node = 1;
    g.per_node.gpus = 2;
    spec.task_groups.push_back(g);
    spec.nodes_min = spec.nodes_max = 2;
    uint64_t id = Submit(spec);
    RunUntil([&] { return ctl->jobs().Find(id)->State() == JobState::kRunning; });
    return id;
  }

  void Xid(const std::string& node, uint32_t gpu, uint32_t xid) {
    GpuState g = ctl->nodes().Find(node)->gpus.at(gpu);
    g.healthy = false;
    g.health_reason = "XID " + std::to_string(xid) + ": GPU has fallen off the bus";
    ctl->OnGpuUpdate(node, g, xid);
  }

  // The batch node reports the end of the job's current run (it was killed).
  void BatchEnded(uint64_t id) {
    const JobRecord* j = ctl->jobs().Find(id);
    RegisterInfo::Finished f{id, JobState::kCancelled, 0, 15, 0, "", j->run};
    ctl->OnJobFinished(j->alloc.front().node, f);
  }

  bool Signalled(const std::string& node, uint64_t id) {
    const auto& s = links[node]->sent;
    return std::count(s.begin(), s.end(), "signal " + std::to_string(id) + " 0") > 0;
  }
  // The batch node's signal follows the launch, which waits for the durable start.
  bool BothSignalled(uint64_t id) {
    RunUntil([&] { return Signalled("n1", id); });
    return Signalled("n2", id);
  }

  std::string Event(uint64_t id, const std::string& type) {
    auto ev = store->EventsForJob(id);
    REQUIRE(ev.ok());
    for (const auto& e : *ev)
      if (e.type == type) return e.detail;
    return "";
  }
};

}  // namespace

TEST_CASE("requeue (the default): the whole gang stops and pends while the GPU is drained") {
  Gang c("");
  uint64_t id = c.SubmitGang();
  c.Xid("n2", 1, 79);
  // The batch node and the other node's tasks: never half a gang running.
  CHECK(c.BothSignalled(id));
  CHECK(c.ctl->jobs().Find(id)->requeue_requested);
  std::string ev = c.Event(id, event::kGpuFailure);
  CHECK(ev.find("\"node\":\"n2\"") != std::string::npos);
  CHECK(ev.find("\"gpu\":1") != std::string::npos);
  CHECK(ev.find("\"xid\":79") != std::string::npos);
  CHECK(ev.find("\"policy\":\"requeue\"") != std::string::npos);
  CHECK_FALSE(c.ctl->nodes().Find("n2")->gpus.at(1).healthy);
  c.BatchEnded(id);
  c.RunUntil([&] { return c.ctl->jobs().Find(id)->State() == JobState::kPending; });
  c.RunUntil([&] { return !c.Event(id, event::kRequeued).empty(); });  // committed
  CHECK(c.Event(id, event::kRequeued).find("GPU 1 of node n2 failed: XID 79") !=
        std::string::npos);
  // It needs both GPUs of n2: it does not start again on the drained one.
  for (int i = 0; i < 20; ++i) c.core.io().run_one_for(std::chrono::milliseconds(10));
  CHECK(c.ctl->jobs().Find(id)->State() == JobState::kPending);
  REQUIRE(c.ctl->UpdateGpu("n2", 1, "RESUME", "").ok());
  c.RunUntil([&] { return c.ctl->jobs().Find(id)->State() == JobState::kRunning; });
}

TEST_CASE("fail: the gang stops and ends FAILED naming the GPU") {
  Gang c("fail");
  uint64_t id = c.SubmitGang();
  c.Xid("n2", 0, 48);
  CHECK(c.BothSignalled(id));
  CHECK_FALSE(c.ctl->jobs().Find(id)->requeue_requested);
  c.BatchEnded(id);
  c.RunUntil([&] { return c.ctl->jobs().Find(id)->State() == JobState::kFailed; });
  CHECK(c.ctl->jobs().Find(id)->reason == "GPU 0 of node n2 failed: XID 48: GPU has fallen off the bus");
  CHECK(c.Event(id, event::kGpuFailure).find("\"policy\":\"fail\"") != std::string::npos);
}

TEST_CASE("ignore: the gang runs on, the GPU is drained and the event recorded") {
  Gang c("ignore");
  uint64_t id = c.SubmitGang();
  c.RunUntil([&] { return c.links["n1"]->sent.size() == 1; });  // the launch
  c.Xid("n1", 1, 79);
  for (int i = 0; i < 20; ++i) c.core.io().run_one_for(std::chrono::milliseconds(10));
  CHECK_FALSE(c.Signalled("n1", id));
  CHECK_FALSE(c.Signalled("n2", id));
  CHECK(c.ctl->jobs().Find(id)->State() == JobState::kRunning);
  CHECK(c.Event(id, event::kGpuFailure).find("\"policy\":\"ignore\"") != std::string::npos);
  CHECK_FALSE(c.ctl->nodes().Find("n1")->gpus.at(1).healthy);
}
