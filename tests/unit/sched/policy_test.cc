// Issue 17 §2: the default policy (time-limit factor, Slurm's formula when weights are named),
// tessera-sim's presets and options, and multi-node trace jobs spread without losing a unit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "ctld/sched/priority.h"
#include "ctld/sched/sched_config.h"
#include "sim/engine.h"
#include "sim/options.h"
#include "sim/trace.h"

using namespace tessera;
using namespace tessera::sched;

namespace {
Result<SchedConfig> Build(const std::string& text) {
  std::filesystem::path p = std::filesystem::temp_directory_path() / "tessera_policy_test.conf";
  std::ofstream(p) << text;
  auto lines = ParseConfigFile(p.string());
  if (!lines.ok()) return lines.status();
  return BuildSchedConfig(*lines);
}
}  // namespace

TEST_CASE("time-limit factor: 1 at a minute or less, 0 at PriorityTimeLimitMax, log between") {
  SchedConfig c;
  CHECK(TimeLimitFactor(1, c) == 1.0);
  CHECK(TimeLimitFactor(60, c) == 1.0);
  CHECK(TimeLimitFactor(7 * 86400, c) == 0.0);
  CHECK(TimeLimitFactor(30 * 86400, c) == 0.0);
  CHECK(TimeLimitFactor(3600, c) == Approx(1 - std::log(60.0) / std::log(10080.0)));
  CHECK(TimeLimitFactor(86400, c) == Approx(1 - std::log(1440.0) / std::log(10080.0)));
  CHECK(TimeLimitFactor(600, c) > TimeLimitFactor(3600, c));
  c.priority_time_limit_max = 3600;
  CHECK(TimeLimitFactor(3600, c) == 0.0);
  CHECK(TimeLimitFactor(60 * 6, c) == Approx(1 - std::log(6.0) / std::log(60.0)));
}

TEST_CASE("default policy: age + time limit; naming any PriorityWeight gives Slurm's formula") {
  auto d = Build("ClusterName=x\n");
  REQUIRE(d.ok());
  CHECK(d->weight_age == kDefaultWeightAge);
  CHECK(d->weight_time_limit == kDefaultWeightTimeLimit);
  CHECK(d->priority_max_age == kDefaultMaxAge);
  CHECK(d->bf_reservation_depth == 4);  // issue 17 §2: the first 4 blocked jobs are reserved
  CHECK(d->endtime_weight == kDefaultEndtimeWeight);
  CHECK(d->size_weight == kDefaultSizeWeight);
  CHECK(d->scarce_weight == kDefaultScarceWeight);
  CHECK(kDefaultScarceWeight > 0);  // the scarce score is on by default (session 8)
  auto s = Build("PriorityWeightFairshare=10000\n");
  REQUIRE(s.ok());
  CHECK(s->bf_reservation_depth == 1);  // Slurm's formula: EASY, as before
  CHECK(Build("SchedulerParameters=bf_reservation_depth=2\n")->bf_reservation_depth == 2);
  auto sp = Build("SchedulerParameters=binpack_weight=0,spread_weight=1\n");  // spreading: no packing scores
  CHECK(sp->endtime_weight == 0);
  CHECK(sp->size_weight == 0);
  CHECK(sp->scarce_weight == 0);
  CHECK(Build("SchedulerParameters=spread_weight=1,scarce_weight=3\n")->scarce_weight == 3);
  CHECK(Build("SchedulerParameters=scarce_weight=0\n")->scarce_weight == 0);
  CHECK(!Build("SchedulerParameters=scarce_weight=x\n").ok());
  CHECK(Build("SchedulerParameters=spread_weight=1,size_weight=2\n")->size_weight == 2);
  CHECK(s->weight_age == 0);
  CHECK(s->weight_time_limit == 0);
  CHECK(s->weight_fairshare == 10000);
  CHECK(s->priority_max_age == 7 * 86400);
  auto t = Build("PriorityWeightAge=10\nPriorityWeightTimeLimit=50\nPriorityTimeLimitMax=1-0\n");
  REQUIRE(t.ok());
  CHECK(t->weight_age == 10);
  CHECK(t->weight_time_limit == 50);
  CHECK(t->priority_time_limit_max == 86400);
  auto bad = Build("PriorityTimeLimitMax=1\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("PriorityTimeLimitMax") != std::string::npos);
  auto typo = Build("PriorityWeightTimeLimt=5\n");
  REQUIRE(typo.ok());
  REQUIRE(typo->warnings.size() == 1);
  CHECK(typo->warnings[0].find("PriorityWeightTimeLimt") != std::string::npos);
}

TEST_CASE("bf_oldest: on in the default policy (1 job, 1 hour), off with Slurm's formula, settable") {
  auto d = Build("ClusterName=x\n");
  REQUIRE(d.ok());
  CHECK(d->bf_oldest == 1);
  CHECK(d->bf_oldest_wait == 3600);
  CHECK(SchedConfig{}.bf_oldest == 0);  // the struct itself: EASY, no starvation rule
  auto s = Build("PriorityWeightAge=1000\n");
  REQUIRE(s.ok());
  CHECK(s->bf_oldest == 0);
  auto set = Build("PriorityWeightAge=1000\nSchedulerParameters=bf_oldest=2,bf_oldest_wait=60\n");
  REQUIRE(set.ok());
  CHECK(set->bf_oldest == 2);
  CHECK(set->bf_oldest_wait == 60);
  CHECK(Build("SchedulerParameters=bf_oldest=0\n")->bf_oldest == 0);
  CHECK(Build("SchedulerParameters=bf_oldest=0\n")->warnings.empty());
  auto bad = Build("SchedulerParameters=bf_oldest_wait=1h\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("bf_oldest_wait") != std::string::npos);
  CHECK_FALSE(Build("SchedulerParameters=bf_oldest=-1\n").ok());
  // tessera-sim's FCFS presets have no such rule (their order's head is the oldest anyway).
  bool h = false;
  for (const char* name : {"easy", "conservative", "fifo"}) CHECK(sim::PolicyPreset(name, *d, &h).bf_oldest == 0);
}

TEST_CASE("the time-limit factor is a weighted part of the priority (tprio's TIMELIMIT)") {
  SchedConfig c;  // the default policy
  PriorityContext ctx{100000, 128, 0, 1, 0};
  JobSnap j;
  j.submit_time = 100000 - 43200;  // half a day: 7000 x 0.5 / 7 -> age 500
  auto f = MultifactorFactors(j, 1, 0, 1, c, ctx, 3600);
  CHECK(f.age == Approx(500));
  CHECK(f.time_limit == Approx(kDefaultWeightTimeLimit * (1 - std::log(60.0) / std::log(10080.0))));
  CHECK(f.total == std::llround(f.age + f.time_limit));
  CHECK(MultifactorPriority(j, 1, 0, 1, c, ctx, 3600) == f.total);
  // Starvation bound: the largest time-limit advantage (4000) is 4 days of age (1000 a day):
  // a 7-day job outranks a one-minute job submitted 4 days (and a second) after it.
  JobSnap old_long = j, fresh_short = j;
  old_long.submit_time = ctx.now - 4 * 86400 - 1;
  fresh_short.submit_time = ctx.now;
  CHECK(MultifactorPriority(old_long, 1, 0, 1, c, ctx, 7 * 86400) >=
        MultifactorPriority(fresh_short, 1, 0, 1, c, ctx, 60));
  old_long.submit_time = ctx.now - 3 * 86400;  // within the bound: the short job goes first
  CHECK(MultifactorPriority(old_long, 1, 0, 1, c, ctx, 7 * 86400) <
        MultifactorPriority(fresh_short, 1, 0, 1, c, ctx, 60));
  // Without a limit argument the job's own (else default_time) is used.
  j.time_limit = 60;
  CHECK(MultifactorFactors(j, 1, 0, 1, c, ctx).time_limit == Approx(kDefaultWeightTimeLimit));
}

TEST_CASE("EffectiveTimeLimit: job, partition DefaultTime, MaxTime, default_time") {
  SchedConfig c;
  JobSnap j;
  PartitionSnap p{"p", true, 0, 7200, 600, 1};
  CHECK(EffectiveTimeLimit(j, &p, c) == 600);
  p.default_time = -1;
  CHECK(EffectiveTimeLimit(j, &p, c) == 7200);
  CHECK(EffectiveTimeLimit(j, nullptr, c) == c.default_time);
  j.time_limit = 30;
  CHECK(EffectiveTimeLimit(j, &p, c) == 30);
}

TEST_CASE("sim presets: easy = FCFS depth 1, conservative = every job, fifo = no backfill") {
  SchedConfig base;
  bool h = false;
  auto easy = sim::PolicyPreset("easy", base, &h);
  CHECK(h);
  CHECK(easy.bf_reservation_depth == 1);
  CHECK(easy.plugins[0] == "fifo");
  CHECK(std::count(easy.plugins.begin(), easy.plugins.end(), "priority") == 0);
  CHECK(easy.actions.back() == "backfill");
  auto cons = sim::PolicyPreset("conservative", base, &h);
  CHECK(cons.bf_reservation_depth == sim::kEveryJob);
  CHECK(cons.plugins[0] == "fifo");
  auto fifo = sim::PolicyPreset("fifo", base, &h);
  CHECK(fifo.actions == std::vector<std::string>{"enqueue", "allocate"});
  CHECK(fifo.plugins[0] == "fifo");
  auto other = sim::PolicyPreset("spread", base, &h);
  CHECK_FALSE(h);
  CHECK(other.plugins == base.plugins);
}

TEST_CASE("sim options: unknown flags, missing values and stray words are refused") {
  const char* ok[] = {"tessera-sim", "--trace", "t.swf", "--conf", "c.conf", "--compare", "default,easy"};
  auto a = sim::ParseSimArgs(7, ok);
  REQUIRE(a.ok());
  CHECK(a->at("compare") == "default,easy");
  const char* typo[] = {"tessera-sim", "--trace", "t.swf", "--arival-scale", "0.5"};
  auto b = sim::ParseSimArgs(5, typo);
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().message().find("unknown option --arival-scale") != std::string::npos);
  CHECK(b.status().message().find("--arrival-scale") != std::string::npos);
  const char* novalue[] = {"tessera-sim", "--trace"};
  CHECK(sim::ParseSimArgs(2, novalue).status().message().find("needs a value") != std::string::npos);
  const char* stray[] = {"tessera-sim", "trace.swf"};
  CHECK(sim::ParseSimArgs(2, stray).status().message().find("unexpected argument") != std::string::npos);
  const char* twice[] = {"tessera-sim", "--limit", "1", "--limit", "2"};
  CHECK(sim::ParseSimArgs(5, twice).status().message().find("twice") != std::string::npos);
}

TEST_CASE("sim: a multi-node job's totals are spread over its nodes without losing a unit") {
  sim::TraceJob t;
  t.gpus = 20;
  t.cpus = 10;
  t.mem_mib = 1000;
  auto g = sim::SpreadOverNodes(t, 3);
  uint64_t gpus = 0, cpus = 0, mem = 0, tasks = 0;
  for (const auto& x : g) {
    CHECK(x.tasks_per_node == 1);
    gpus += uint64_t{x.per_task.gpus} * x.count;
    cpus += uint64_t{x.per_task.cpus} * x.count;
    mem += x.per_task.mem_mib * x.count;
    tasks += x.count;
  }
  CHECK(tasks == 3);
  CHECK(gpus == 20);  // 7 + 7 + 6, not 3 x 6
  CHECK(cpus == 10);
  CHECK(mem == 1000);
  CHECK(g[0].per_task.gpus == 7);
  CHECK(g.back().per_task.gpus == 6);
  t.gpus = 6, t.cpus = 3, t.mem_mib = 0;
  auto even = sim::SpreadOverNodes(t, 3);
  REQUIRE(even.size() == 1);
  CHECK(even[0].count == 3);
  CHECK(even[0].per_task.gpus == 2);
}

TEST_CASE("sim: a 20-GPU job over 3 nodes runs with 20 GPUs on 3 distinct nodes") {
  // 16-GPU nodes: the 6-GPU task would fit beside a 7-GPU one (binpack prefers that node), but
  // the job asked 3 nodes, so each task opens its own (placement.cc, fresh_only_).
  ClusterSnapshot c;
  for (int i = 0; i < 4; ++i) {
    NodeSnap n;
    n.name = "n" + std::to_string(i);
    n.cpus_total = n.cpus_free = 16;
    n.mem_total = n.mem_free = 64000;
    n.partitions = {"p"};
    for (uint32_t k = 0; k < 16; ++k) {
      GpuSnap g;
      g.index = k;
      g.model = "a100";
      n.gpus.push_back(g);
    }
    c.nodes.push_back(n);
  }
  c.partitions = {{"p", true, 0, -1, -1, 1}};
  sim::TraceJob t;
  t.id = 1;
  t.runtime = 100;
  t.gpus = 20;
  t.cpus = 12;
  t.mem_mib = 3000;
  t.nodes = 3;
  auto run = sim::Simulate(c, "p", SchedConfig{}, {t}, "default");
  REQUIRE(run.error.empty());
  REQUIRE(run.jobs[0].start == 0);
  CHECK(run.jobs[0].gpus == 20);
  CHECK(run.jobs[0].cpus == 12);
  CHECK(run.jobs[0].nodes.size() == 3);
}
