// ctld's side of preemption (issue 16 §4): what a suspended victim keeps in the snapshot, the
// event details, and that Apply accepts the new events without changing the record.
#include <catch2/catch.hpp>

#include "ctld/jobs/job_codec.h"
#include "ctld/preemption.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {

JobRecord Running(uint64_t id, std::vector<NodeAlloc> alloc) {
  JobRecord j;
  j.job_id = id;
  j.state = static_cast<int>(JobState::kRunning);
  j.alloc = std::move(alloc);
  return j;
}

sched::ClusterSnapshot TwoNodes() {
  sched::ClusterSnapshot s;
  for (const char* n : {"a", "b"}) {
    sched::NodeSnap ns;
    ns.name = n;
    ns.cpus_total = ns.cpus_free = 8;
    ns.mem_total = ns.mem_free = 8000;
    ns.gpus = {{0, "a100", true, true, ""}, {1, "a100", true, true, ""}};
    s.nodes.push_back(ns);
  }
  return s;
}

}  // namespace

TEST_CASE("a suspended victim keeps what its preemptor does not use, and nobody else gets it") {
  // Victim 1: 8 CPUs and both GPUs on a, 4 CPUs on b (lent: not in the node tables).
  JobRecord v = Running(1, {{"a", 8, 8000, {0, 1}, 1, {}, 0, 0}, {"b", 4, 4000, {}, 1, {}, 0, 0}});
  v.state = static_cast<int>(JobState::kSuspended);
  // Preemptor 2 runs on a with 6 CPUs and GPU 1 (the node tables hold that).
  JobRecord p = Running(2, {{"a", 6, 6000, {1}, 1, {}, 0, 0}});
  sched::ClusterSnapshot s = TwoNodes();
  s.nodes[0].cpus_free = 2, s.nodes[0].mem_free = 2000, s.nodes[0].gpus[1].free = false;
  s.nodes[1].cpus_free = 8, s.nodes[1].mem_free = 8000;
  sched::RunningSnap rv;
  rv.id = 1;
  rv.nodes = {{"a", 8, 8000, 2, {0, 1}, {}}, {"b", 4, 4000, 0, {}, {}}};
  s.running.push_back(rv);
  HoldSuspended(s, v, &p);
  CHECK(s.nodes[0].cpus_free == 0);        // 2 more of a's CPUs are the victim's
  CHECK(s.nodes[0].mem_free == 0);
  CHECK_FALSE(s.nodes[0].gpus[0].free);     // GPU 0: the victim's, not lent
  CHECK(s.nodes[1].cpus_free == 4);        // b: the victim's 4 CPUs held
  REQUIRE(s.running[0].nodes.size() == 2);
  CHECK(s.running[0].nodes[0].cpus == 2);  // its timeline release: what it holds
  CHECK(s.running[0].nodes[0].gpu_indices == std::vector<uint32_t>{0});
  CHECK_FALSE(s.running[0].preemptable);
  // The preemptor has ended: the victim's whole allocation is held.
  sched::ClusterSnapshot t = TwoNodes();
  t.running.push_back(rv);
  HoldSuspended(t, v, nullptr);
  CHECK(t.nodes[0].cpus_free == 0);  // all 8 of a held
  CHECK_FALSE(t.nodes[0].gpus[1].free);
  CHECK(t.nodes[1].cpus_free == 4);
}

TEST_CASE("preemption events are recorded and change nothing in the record") {
  JobRecord j = Running(5, {{"a", 1, 100, {}, 1, {}, 0, 0}});
  std::string d = PreemptedDetail(9, "REQUEUE", 30);
  CHECK(d.find("\"by\":9") != std::string::npos);
  CHECK(d.find("\"grace_time\":30") != std::string::npos);
  JobEvent e{1, 5, 100, event::kPreempted, d};
  auto r = Apply(j, e);
  REQUIRE(r.ok());
  CHECK(r->State() == JobState::kRunning);
  std::string p = PreemptingDetail({{5, "SUSPEND", 0}, {6, "CANCEL", 3}});
  CHECK(p.find("[5,6]") != std::string::npos);
  CHECK(Apply(j, JobEvent{2, 5, 100, event::kPreempting, p}).ok());
}
