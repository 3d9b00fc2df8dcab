// Victim selection of the preempt action and the preemption settings (issue 16 §4).
#include <catch2/catch.hpp>

#include <algorithm>

#include "common/config_file.h"
#include "ctld/sched/scheduler.h"

using namespace tessera;
using namespace tessera::sched;

namespace {

SchedConfig Cfg(const std::string& text) {
  auto lines = ParseConfigText(text, "t.conf");
  REQUIRE(lines.ok());
  auto c = BuildSchedConfig(*lines);
  INFO(c.status().message());
  REQUIRE(c.ok());
  return *c;
}

const std::string kQos =
    "PreemptType=preempt/qos\nPreemptMode=REQUEUE\n"
    "QOSName=low Priority=1\nQOSName=mid Priority=5\nQOSName=high Priority=10 Preempt=low,mid\n";

// `n` nodes of 8 CPUs (8000 MiB) in partition p.
ClusterSnapshot Cluster(int n) {
  ClusterSnapshot s;
  s.now = 10000;
  s.partitions.push_back({"p", true, 0, -1, -1, 1, false});
  for (int i = 1; i <= n; ++i) {
    NodeSnap ns;
    ns.name = "n" + std::to_string(i);
    ns.cpus_total = ns.cpus_free = 8;
    ns.mem_total = ns.mem_free = 8000;
    ns.partitions = {"p"};
    s.nodes.push_back(ns);
  }
  return s;
}

// A running job holding `cpus` on each named node.
void Run(ClusterSnapshot& s, uint64_t id, const std::string& qos, std::vector<std::string> nodes,
         uint32_t cpus, int64_t start, int64_t prio = 0) {
  RunningSnap r;
  r.id = id;
  r.qos = qos;
  r.partition = "p";
  r.user = "u";
  r.start_time = start;
  r.priority = prio;
  for (const auto& n : nodes) {
    r.nodes.push_back({n, cpus, cpus * 1000ull, 0, {}, {}});
    for (auto& ns : s.nodes)
      if (ns.name == n) ns.cpus_free -= cpus, ns.mem_free -= cpus * 1000ull, ns.idle = false;
  }
  s.running.push_back(r);
}

void Pend(ClusterSnapshot& s, uint64_t id, const std::string& qos, uint32_t tasks, uint32_t cpus,
          uint32_t nodes_min = 0) {
  JobSnap j;
  j.id = id;
  j.partition = "p";
  j.qos = qos;
  j.user = "v";
  j.submit_time = 100 + static_cast<int64_t>(id);
  j.nodes_min = nodes_min;
  GroupReq g;
  g.count = tasks;
  g.per_task.cpus = cpus;
  j.groups.push_back(g);
  s.pending.push_back(j);
}

std::vector<uint64_t> Victims(const CycleResult& r, uint64_t preemptor) {
  for (const auto& p : r.preemptions)
    if (p.preemptor == preemptor) {
      std::vector<uint64_t> v;
      for (const auto& x : p.victims) v.push_back(x.job_id);
      std::sort(v.begin(), v.end());
      return v;
    }
  return {};
}

}  // namespace

TEST_CASE("preempt settings: PreemptType adds the preempt action; bad values are refused") {
  SchedConfig c = Cfg(kQos);
  CHECK(c.preempt_type == PreemptType::kQos);
  CHECK(std::find(c.actions.begin(), c.actions.end(), "preempt") == c.actions.begin() + 2);
  CHECK(c.preempt_mode.kind == PreemptModeKind::kRequeue);
  CHECK(c.qos.at("high").preempt == std::vector<std::string>{"low", "mid"});
  CHECK(Cfg("QOSName=normal\n").actions == SchedConfig().actions);  // preempt/none: unchanged
  SchedConfig d = Cfg("PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n"
                      "PreemptExemptTime=0:10:00\nPartitionName=DEFAULT GraceTime=30\n"
                      "PartitionName=lo Nodes=n1 PreemptMode=requeue\n"
                      "QOSName=q GraceTime=5 PreemptMode=cancel PreemptExemptTime=0:01:00\n");
  CHECK(d.preempt_mode.kind == PreemptModeKind::kSuspend);
  CHECK(d.preempt_mode.gang);
  CHECK(d.preempt_exempt_time == 600);
  CHECK(d.partition_preempt.at("lo").mode == PreemptModeKind::kRequeue);
  CHECK(d.partition_preempt.at("lo").grace_time == 30);
  CHECK(d.qos.at("q").grace_time == 5);
  CHECK(d.qos.at("q").preempt_mode == PreemptModeKind::kCancel);
  CHECK(d.qos.at("q").preempt_exempt_time == 60);
  CHECK(std::any_of(d.warnings.begin(), d.warnings.end(),
                    [](const std::string& w) { return w.find("GANG") != std::string::npos; }));
  for (const char* bad : {"PreemptType=preempt/magic\n", "PreemptMode=SOMETIMES\n",
                          "PreemptMode=CANCEL,SUSPEND\n", "QOSName=a Preempt=nosuch\n",
                          "QOSName=a GraceTime=soon\n", "PartitionName=p PreemptMode=x\n"}) {
    INFO(bad);
    auto lines = ParseConfigText(bad, "t.conf");
    REQUIRE(lines.ok());
    auto r = BuildSchedConfig(*lines);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("t.conf:1") != std::string::npos);
  }
}

TEST_CASE("victims: the cheapest that make room, whole jobs, and none that is not needed") {
  SchedConfig c = Cfg(kQos);
  ClusterSnapshot s = Cluster(2);
  Run(s, 1, "low", {"n1"}, 4, 5000);       // cheapest (low QoS), 4 CPUs
  Run(s, 2, "low", {"n1"}, 4, 4000);       // low, started earlier: more run time lost
  Run(s, 3, "mid", {"n2"}, 8, 9000);       // mid QoS
  Pend(s, 10, "high", 1, 8);               // needs a whole node
  CycleResult r = RunCycle(s, c, Registry::Builtin());
  REQUIRE(r.status.ok());
  // One mid victim (fewest: one job frees a whole node) rather than two low ones.
  CHECK(Victims(r, 10) == std::vector<uint64_t>{3});
  REQUIRE(r.decisions[0].kind == Decision::Kind::kPending);
  CHECK(r.decisions[0].reason == "Resources");
  CHECK(r.decisions[0].reserved_nodes == std::vector<std::string>{"n2"});
  CHECK(r.preemptions[0].victims[0].mode == "REQUEUE");

  // A 4-CPU job: the cheapest single low job, the most recently started one (1).
  ClusterSnapshot s2 = Cluster(2);
  Run(s2, 1, "low", {"n1"}, 4, 5000);
  Run(s2, 2, "low", {"n1"}, 4, 4000);
  Run(s2, 3, "mid", {"n2"}, 8, 9000);
  Pend(s2, 10, "high", 1, 4);
  CHECK(Victims(RunCycle(s2, c, Registry::Builtin()), 10) == std::vector<uint64_t>{1});
}

TEST_CASE("victims: a multi-node gang is preempted whole and only when it helps") {
  SchedConfig c = Cfg(kQos);
  ClusterSnapshot s = Cluster(3);
  Run(s, 1, "low", {"n1", "n2", "n3"}, 4, 9000);  // one gang on three nodes
  Run(s, 2, "low", {"n1"}, 4, 9500);
  Run(s, 3, "low", {"n2"}, 4, 9500);
  Pend(s, 10, "high", 2, 8, 2);  // two whole nodes
  CycleResult r = RunCycle(s, c, Registry::Builtin());
  auto v = Victims(r, 10);
  // The gang (on every node) frees n3 whole; n2 also needs job 3 (as cheap as 2, higher id).
  // Job 2 is not needed: not preempted.
  CHECK(v == std::vector<uint64_t>{1, 3});
  REQUIRE(r.preemptions.size() == 1);
  CHECK(r.preemptions[0].placement.size() == 2);
}

TEST_CASE("victims: nobody is preempted when even every candidate would not make room") {
  SchedConfig c = Cfg(kQos);
  ClusterSnapshot s = Cluster(2);
  Run(s, 1, "low", {"n1"}, 8, 9000);
  Run(s, 2, "high", {"n2"}, 8, 9000);  // not preemptable by high
  Pend(s, 10, "high", 2, 8, 2);
  CycleResult r = RunCycle(s, c, Registry::Builtin());
  CHECK(r.preemptions.empty());
  CHECK(r.decisions[0].reason == "Resources");
  CHECK(r.decisions[0].expected_start == 0);
}

TEST_CASE("victims: PreemptExemptTime protects recently started jobs; pending victims count") {
  SchedConfig c = Cfg(kQos + "PreemptExemptTime=0:10:00\n");
  ClusterSnapshot s = Cluster(2);
  Run(s, 1, "low", {"n1"}, 8, s.now - 100);   // exempt for 500 s more
  Run(s, 2, "low", {"n2"}, 8, s.now - 1000);  // not exempt
  Pend(s, 10, "high", 1, 8);
  CHECK(Victims(RunCycle(s, c, Registry::Builtin()), 10) == std::vector<uint64_t>{2});
  // Next cycle: job 2 is still ending for job 10: nothing new is chosen, the place is held.
  s.running[1].preempted_for = 10;
  Pend(s, 11, "low", 1, 1);  // must not take n2's CPUs in this cycle
  CycleResult r = RunCycle(s, c, Registry::Builtin());
  REQUIRE(r.preemptions.size() == 1);
  CHECK(r.preemptions[0].victims.empty());
  CHECK(r.preemptions[0].pending_victims == std::vector<uint64_t>{2});
  CHECK(r.decisions[1].kind == Decision::Kind::kPending);
}
