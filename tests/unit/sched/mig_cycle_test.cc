// The migplan action inside a full scheduling cycle (RunCycle): pending MIG-profile demand
// produces CycleResult::mig_reconfigs, the GPUs are held on the timeline for
// mig_reconfig_seconds (backfill sees it), served jobs wait with reason MigReconfiguring.
#include <catch2/catch.hpp>

#include "ctld/sched/registry.h"
#include "ctld/sched/sched_config.h"
#include "ctld/sched/scheduler.h"

using namespace tessera;
using namespace tessera::sched;

namespace {

constexpr int64_t kNow = 100000;

// n1: 16 CPUs; GPU 0 an A100-80GB in MIG mode with 7 x 1g.10gb (free unless `busy_slot`),
// dynamic unless told otherwise.
NodeSnap MigNode(bool dynamic, int busy_slot = -1) {
  NodeSnap n;
  n.name = "n1";
  n.cpus_total = n.cpus_free = 16;
  n.mem_total = n.mem_free = 64000;
  n.partitions = {"p"};
  MigGpuSnap g;
  g.index = 0;
  g.mig_model = "A100-80GB";
  g.mig_enabled = true;
  g.dynamic = dynamic;
  for (uint32_t s = 0; s < 7; ++s) {
    std::string uuid = "MIG-" + std::to_string(s);
    bool free = static_cast<int>(s) != busy_slot;
    g.instances.push_back({"1g.10gb", s, uuid, free});
    n.gpus.push_back({0, "1g.10gb", free, true, uuid});
  }
  n.mig_gpus = {g};
  return n;
}

JobSnap MigJob(uint64_t id, const std::string& profile, uint32_t count, int64_t limit = 3600) {
  JobSnap j;
  j.id = id;
  j.partition = "p";
  j.submit_time = static_cast<int64_t>(id);
  j.priority = 1000 - static_cast<int64_t>(id);
  j.time_limit = limit;
  GroupReq g;
  g.count = 1;
  g.per_task.cpus = 1;
  g.per_task.mem_mib = 100;
  g.per_task.gpus = count;
  g.per_task.gpu_model = profile;
  j.groups = {g};
  return j;
}

ClusterSnapshot Snap(NodeSnap n, std::vector<JobSnap> jobs) {
  ClusterSnapshot s;
  s.now = kNow;
  s.nodes = {std::move(n)};
  PartitionSnap p;
  p.name = "p";
  s.partitions = {p};
  s.pending = std::move(jobs);
  return s;
}

const Decision& D(const CycleResult& r, uint64_t id) {
  for (const auto& d : r.decisions)
    if (d.job_id == id) return d;
  FAIL("no decision for job " << id);
  return r.decisions[0];
}

}  // namespace

TEST_CASE("migplan: a pending profile no layout offers gets a reconfiguration and waits for it") {
  SchedConfig cfg;
  REQUIRE(cfg.actions == std::vector<std::string>{"enqueue", "allocate", "migplan", "backfill"});
  auto r = RunCycle(Snap(MigNode(true), {MigJob(1, "2g.20gb", 1)}), cfg, Registry::Builtin());
  REQUIRE(r.status.ok());
  REQUIRE(r.mig_reconfigs.size() == 1);
  const MigReconfig& m = r.mig_reconfigs[0];
  CHECK(m.node == "n1");
  CHECK(m.gpu_index == 0);
  CHECK(m.for_jobs == std::vector<uint64_t>{1});
  // All three 2g starts leave nothing more placeable (score 0): the lowest start wins.
  CHECK(m.create == std::vector<std::pair<std::string, uint32_t>>{{"2g.20gb", 0}});
  CHECK(m.destroy == std::vector<std::string>{"MIG-0", "MIG-1"});
  const Decision& d = D(r, 1);
  CHECK(d.kind == Decision::Kind::kPending);
  CHECK(d.reason == "MigReconfiguring");
  CHECK(d.expected_start == kNow + 10);
  CHECK(d.reserved_nodes == std::vector<std::string>{"n1"});
}

TEST_CASE("migplan: static GPUs and GPUs with an instance in use are not re-laid") {
  SchedConfig cfg;
  auto r = RunCycle(Snap(MigNode(false), {MigJob(1, "2g.20gb", 1)}), cfg, Registry::Builtin());
  CHECK(r.mig_reconfigs.empty());
  CHECK(D(r, 1).reason != "MigReconfiguring");
  auto busy = RunCycle(Snap(MigNode(true, 2), {MigJob(1, "2g.20gb", 1)}), cfg, Registry::Builtin());
  CHECK(busy.mig_reconfigs.empty());
}

TEST_CASE("migplan: the GPU being re-laid is held on the timeline (backfill sees it)") {
  auto cfg = BuildSchedConfig({});
  REQUIRE(cfg.ok());
  // Job 1 (first in order) needs more CPUs than the node has: allocate blocks the partition
  // there, so jobs 2 and 3 wait with Priority. Only the first MIG job (2, 3g.40gb) is planned;
  // job 3 (1g.10gb) is left to backfill.
  cfg->mig_plan_depth = 1;
  cfg->mig_reconfig_seconds = 30;
  JobSnap blocker = MigJob(1, "", 0);
  blocker.groups[0].per_task.cpus = 32;
  auto r = RunCycle(Snap(MigNode(true), {blocker, MigJob(2, "3g.40gb", 1), MigJob(3, "1g.10gb", 1, 600)}),
                    *cfg, Registry::Builtin());
  REQUIRE(r.mig_reconfigs.size() == 1);
  CHECK(r.mig_reconfigs[0].for_jobs == std::vector<uint64_t>{2});
  CHECK(D(r, 2).reason == "MigReconfiguring");
  CHECK(D(r, 2).expected_start == kNow + 30);
  // Without the hold backfill would start job 3 now on a 1g instance of the GPU being re-laid.
  CHECK(D(r, 3).kind == Decision::Kind::kPending);
  CHECK(D(r, 3).expected_start >= kNow + 30);
}

TEST_CASE("allocate passes over a job whose MIG profile no node offers now") {
  // Job 1 asks 3g.40gb (no layout has it, the GPU is static): it does not block job 2 (1g.10gb).
  SchedConfig cfg;
  auto r = RunCycle(Snap(MigNode(false), {MigJob(1, "3g.40gb", 1), MigJob(2, "1g.10gb", 1)}), cfg,
                    Registry::Builtin());
  CHECK(D(r, 1).kind == Decision::Kind::kPending);
  CHECK(D(r, 2).kind == Decision::Kind::kStart);
  CHECK_FALSE(D(r, 2).backfilled);
}

TEST_CASE("migplan: a reconfiguration in flight keeps its jobs waiting and is not planned again") {
  NodeSnap n = MigNode(true);
  n.mig_gpus[0].busy = true;
  n.mig_gpus[0].reconfig_until = kNow + 7;
  n.mig_gpus[0].reconfig_for = {1};
  for (auto& g : n.gpus) g.free = false;
  SchedConfig cfg;
  auto r = RunCycle(Snap(n, {MigJob(1, "2g.20gb", 1), MigJob(2, "2g.20gb", 1)}), cfg, Registry::Builtin());
  CHECK(r.mig_reconfigs.empty());
  CHECK(D(r, 1).reason == "MigReconfiguring");
  CHECK(D(r, 1).expected_start == kNow + 7);
  CHECK(D(r, 2).reason != "MigReconfiguring");
}

TEST_CASE("migplan: SchedulerParameters mig_reconfig_seconds and mig_plan_depth") {
  std::vector<ConfigLine> lines;
  ConfigLine l;
  l.file = "tessera.conf";
  l.line = 3;
  l.pairs = {{"schedulerparameters", "SchedulerParameters",
              "mig_reconfig_seconds=25,mig_plan_depth=5"}};
  lines.push_back(l);
  auto cfg = BuildSchedConfig(lines);
  REQUIRE(cfg.ok());
  CHECK(cfg->mig_reconfig_seconds == 25);
  CHECK(cfg->mig_plan_depth == 5);
  lines[0].pairs[0].value = "mig_reconfig_seconds=soon";
  auto bad = BuildSchedConfig(lines);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("mig_reconfig_seconds") != std::string::npos);
}
