// sched_scale: cycle time and memory of tessera_sched's RunCycle on synthetic clusters.
//
//   sched_scale [--nodes 1000,10000] [--jobs 10000,100000] [--seed 1] [--cycles 3] [--mig 1]
//               [--preempt 1] [--tree 32,16] [--fairshare 1] [--drf 1] [--queues 1] [--full 1]
//               [--digest 1] [--bf-depth N] [--oldest N] [--scarce W]
//
// --full 1 (issue 20 §2): every node busy with one long exclusive job, every pending job one
// 8-CPU task (MakeFullCluster). --digest 1: a hash of the last cycle's decisions, to compare
// the decisions of two builds on the same input. --bf-depth N: bf_reservation_depth=N (N > 1:
// conservative backfill, many reservations in a cycle). --oldest N (issue 17 §2): the default
// policy's starvation bound, bf_oldest=N with bf_oldest_wait=3600 (0, the default here: off).
// --scarce W (issue 17 §2, session 8): nodeorder's scarce_weight (default: the shipped 4).
//
// --preempt 1 (issue 16 §4): PreemptType=preempt/qos, PreemptMode=REQUEUE; a third of the running
// jobs are in QoS "scav" (preemptable), 5% of the pending jobs in QoS "high" (Preempt=scav), the
// rest "normal" (job order as without QoS: no PriorityWeightQOS); the preempt action runs after
// allocate with its default preempt_depth (16 searches per cycle). --preempt 2: the same QoS and
// priorities with PreemptType=preempt/none (the control: what preemption itself costs).
//
// --tree L,S (issue 15): a 3-tier switch tree over the nodes in index order: leaf switches of L
// nodes, spine switches of S leaves, one core switch over the spines (topology/tree through
// BuildTopologySnap); multi-node jobs are then placed by topology (ctld/sched/topology_place.h).
//
// --fairshare 1 (issue 16 §3): PriorityWeightFairshare=10000 over 20 accounts a0..a19 under
// four parents org0..org3 (Fairshare= 1..4), 200 users with seeded usage; each timed cycle
// includes FillFairshare (Fair Tree over the tree plus every job's association), as ctld does.
// --drf 1: the drf queue-order plugin first in SchedulerPlugins.
// --queues 1 (issue 16 §2): the accounts become queues with guarantees, weights and limits
// (AddQueues); the queue plugin and the reclaim action run (ctld/sched/queues.h).
// --fcfs 1 (issue 17 §2): the default policy's weights (age, time limit) set to 0, i.e. the
// default before issue 17 (submit order), to compare the cycle with and without the new factors.
//
// --mig 1: the a100 nodes (one in four) have MIG-capable 80 GB GPUs under MigStrategy=dynamic:
// GPUs 0-3 are in MIG mode (2g.20gb@0, 1g.10gb@2, 1g.10gb@3, 3g.40gb@4; one instance held where
// the GPU was busy), GPUs 4-7 whole; 15% of the pending jobs ask for one MIG instance (1g, 2g,
// 3g, 4g or 7g: 4g and 7g exist in no current layout, so the dynamic planner has work).
//
// Each cluster has nodes of 64 CPUs, 512 GiB and 8 GPUs (3/4 h100, 1/4 a100), a "main"
// partition over all nodes and a "debug" partition over the first 5%. About half the GPUs are
// held by running jobs that end within a day. The queue mixes single-GPU jobs, CPU jobs,
// multi-node GPU gangs, launcher+worker task groups, constraints and array throttles; the
// generator is a seeded mt19937_64, so a run is reproducible. A "cycle" is the full RunCycle
// with the default configuration (multifactor priority, gang allocation, EASY backfill over
// every pending job).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/config_file.h"
#include "ctld/sched/fairshare.h"
#include "ctld/sched/registry.h"
#include "ctld/sched/scheduler.h"
#include "ctld/sched/topology.h"

namespace {

using tessera::sched::ClusterSnapshot;
using tessera::sched::JobSnap;

// CPU time of this process (ms): unlike wall time, not inflated when other processes share the
// cores (the dev VM is shared by several builds).
double CpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

long ReadStatusKb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::strtol(line.c_str() + std::string(key).size(), nullptr, 10);
  return -1;
}

const char* const kMigProfiles[] = {"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"};

// --mig: the a100 nodes' GPUs as MIG-capable, dynamic (see the header comment).
void AddMig(tessera::sched::NodeSnap& n) {
  using tessera::sched::GpuSnap;
  std::vector<GpuSnap> gpus;
  for (const GpuSnap& g : n.gpus) {
    tessera::sched::MigGpuSnap mg;
    mg.index = g.index;
    mg.mig_model = "A100-80GB";
    mg.dynamic = true;
    if (g.index >= 4) {
      mg.busy = !g.free;
      gpus.push_back(g);
    } else {
      mg.mig_enabled = true;
      const std::pair<const char*, uint32_t> layout[] = {
          {"2g.20gb", 0}, {"1g.10gb", 2}, {"1g.10gb", 3}, {"3g.40gb", 4}};
      for (const auto& [profile, start] : layout) {
        std::string uuid = "MIG-" + n.name + "-" + std::to_string(g.index) + "-" + std::to_string(start);
        bool free = g.free || start != 0;  // a busy GPU keeps one instance held
        mg.instances.push_back({profile, start, uuid, free});
        gpus.push_back({g.index, profile, free, true, uuid});
      }
    }
    n.mig_gpus.push_back(std::move(mg));
  }
  n.gpus = std::move(gpus);
}

ClusterSnapshot MakeCluster(uint32_t n_nodes, uint32_t n_jobs, uint64_t seed, bool mig) {
  std::mt19937_64 rng(seed);
  auto uni = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  ClusterSnapshot s;
  s.now = 1'700'000'000;
  s.partitions = {{"main", true, 0, 2 * 86400, 3600, 1}, {"debug", true, 4, 3600, 600, 2}};
  for (uint32_t i = 0; i < n_nodes; ++i) {
    tessera::sched::NodeSnap n;
    n.name = "gpu" + std::to_string(i);
    n.cpus_total = n.cpus_free = 64;
    n.mem_total = n.mem_free = 512 * 1024;
    std::string model = i % 4 == 3 ? "a100" : "h100";
    for (uint32_t g = 0; g < 8; ++g) n.gpus.push_back({g, model, true, true});
    n.features = {model, "rack" + std::to_string(i / 32), i % 2 ? "ib" : "eth"};
    n.partitions = {"main"};
    if (i < n_nodes / 20) n.partitions.push_back("debug");
    s.nodes.push_back(std::move(n));
  }
  // Running jobs: about half the GPUs, ending within a day.
  uint64_t id = 1;
  for (auto& n : s.nodes) {
    uint32_t gpus = static_cast<uint32_t>(uni(0, 8));
    if (gpus == 0) continue;
    tessera::sched::RunningSnap r;
    r.id = id++;
    r.user = "u" + std::to_string(uni(0, 199));
    r.account = "a" + std::to_string(uni(0, 19));
    r.partition = "main";
    r.start_time = s.now - uni(0, 3600);
    r.end_time = s.now + uni(60, 86400);
    uint32_t cpus = gpus * 8;
    r.nodes.push_back({n.name, cpus, uint64_t{cpus} * 8192, gpus});
    n.cpus_free -= cpus;
    n.mem_free -= uint64_t{cpus} * 8192;
    for (uint32_t g = 0; g < gpus; ++g) n.gpus[g].free = false;
    n.idle = false;
    s.running.push_back(std::move(r));
  }
  if (mig)
    for (auto& n : s.nodes)
      if (n.features[0] == "a100") AddMig(n);
  for (uint32_t j = 0; j < n_jobs; ++j) {
    JobSnap js;
    js.id = 1'000'000 + j;
    js.partition = uni(0, 19) == 0 ? "debug" : "main";
    js.user = "u" + std::to_string(uni(0, 199));
    js.account = "a" + std::to_string(uni(0, 19));
    js.submit_time = s.now - uni(0, 86400);
    js.time_limit = 600 * uni(1, 144);
    if (js.partition == "debug") js.time_limit = 600;
    int64_t kind = uni(0, 99);
    if (kind < 50) {          // one task, 1-2 GPUs
      js.groups.push_back({"main", 1, {8, 32768, static_cast<uint32_t>(uni(1, 2)), ""}, 0, {}});
    } else if (kind < 70) {   // CPU job
      js.groups.push_back({"main", static_cast<uint32_t>(uni(1, 16)), {static_cast<uint32_t>(uni(1, 4)), 4096, 0, ""}, 0, {}});
    } else if (kind < 90) {   // multi-node GPU gang: 2-16 nodes x 8 GPUs
      uint32_t nodes = static_cast<uint32_t>(uni(2, 16));
      js.groups.push_back({"worker", nodes * 8, {8, 32768, 1, uni(0, 1) ? "h100" : ""}, 8, {}});
      js.nodes_min = nodes;
    } else {                  // launcher x1 + workers
      js.groups.push_back({"launcher", 1, {4, 8192, 0, ""}, 0, {}});
      js.groups.push_back({"worker", static_cast<uint32_t>(8 * uni(1, 4)), {8, 32768, 1, ""}, 8, {}});
    }
    if (mig && uni(0, 99) < 15) {  // one MIG instance
      js.groups.clear();
      js.nodes_min = 0;
      js.groups.push_back({"main", 1, {2, 8192, 1, kMigProfiles[uni(0, 4)]}, 0, {}});
    }
    if (uni(0, 9) == 0) js.constraint = uni(0, 1) ? "ib" : "a100|h100";
    if (uni(0, 49) == 0) {
      js.array_job_id = 900 + uni(0, 9);
      js.array_max_running = 4;
    }
    s.pending.push_back(std::move(js));
  }
  return s;
}

// --full 1 (issue 20 §2): bench/nodeemu scale.py's "cycle" scenario in the library. Every node
// (16 CPUs, 4000 MiB, no GPUs, one partition) runs one exclusive job with the default time
// limit (365 days: beyond bf_window), and every pending job asks one task of 8 CPUs: nothing
// can start and no reservation fits in the window.
ClusterSnapshot MakeFullCluster(uint32_t n_nodes, uint32_t n_jobs) {
  ClusterSnapshot s;
  s.now = 1'700'000'000;
  const int64_t year = 365 * 86400;
  s.partitions = {{"debug", true, 0, -1, -1, 1}};
  for (uint32_t i = 0; i < n_nodes; ++i) {
    tessera::sched::NodeSnap n;
    n.name = "e" + std::to_string(i + 1);
    n.cpus_total = 16;
    n.mem_total = 4000;
    n.mem_free = 4000;
    n.partitions = {"debug"};
    n.idle = false;
    tessera::sched::RunningSnap r;
    r.id = i + 1;
    r.user = "u0";
    r.partition = "debug";
    r.start_time = s.now - 60;
    r.end_time = s.now - 60 + year;
    r.nodes.push_back({n.name, 16, 0, 0});
    s.nodes.push_back(std::move(n));
    s.running.push_back(std::move(r));
  }
  for (uint32_t j = 0; j < n_jobs; ++j) {
    JobSnap js;
    js.id = 1'000'000 + j;
    js.partition = "debug";
    js.user = "u0";
    js.submit_time = s.now - 30;
    js.time_limit = year;
    js.groups.push_back({"main", 1, {8, 0, 0, ""}, 0, {}});
    s.pending.push_back(std::move(js));
  }
  return s;
}

// --preempt (issue 16 §4): QoS for running and pending jobs, and the config that preempts.
void AddPreemption(ClusterSnapshot& s, uint64_t seed) {
  std::mt19937_64 rng(seed + 16);
  for (auto& r : s.running) r.qos = rng() % 3 == 0 ? "scav" : "normal";
  for (auto& j : s.pending) j.qos = rng() % 20 == 0 ? "high" : "normal";
}

tessera::sched::SchedConfig PreemptConfig(bool on) {
  auto lines = tessera::ParseConfigText(
      std::string(on ? "PreemptType=preempt/qos\n" : "") +
      "PreemptMode=REQUEUE\n"
      "QOSName=scav Priority=0\nQOSName=normal Priority=10 Default=YES\n"
      "QOSName=high Priority=100 Preempt=scav\n",
      "sched_scale");
  auto c = tessera::sched::BuildSchedConfig(*lines);
  if (!c.ok()) {
    std::fprintf(stderr, "%s\n", c.status().message().c_str());
    std::exit(1);
  }
  return *c;
}

// --tree: leaves of `leaf` nodes, spines of `spine` leaves, one core (see the header comment).
void AddTree(ClusterSnapshot& s, uint32_t leaf, uint32_t spine) {
  tessera::TopologyConfig cfg;
  cfg.kind = tessera::TopologyKind::kTree;
  std::vector<std::string> names;
  for (const auto& n : s.nodes) names.push_back(n.name);
  uint32_t n_leaves = (static_cast<uint32_t>(names.size()) + leaf - 1) / leaf;
  uint32_t n_spines = (n_leaves + spine - 1) / spine;
  tessera::TopologySwitch core;
  core.name = "core";
  for (uint32_t sp = 0; sp < n_spines; ++sp) {
    tessera::TopologySwitch sw;
    sw.name = "spine" + std::to_string(sp);
    for (uint32_t l = sp * spine; l < std::min(n_leaves, (sp + 1) * spine); ++l) {
      tessera::TopologySwitch lf;
      lf.name = "leaf" + std::to_string(l);
      for (uint32_t i = l * leaf; i < std::min<uint32_t>(names.size(), (l + 1) * leaf); ++i)
        lf.nodes.push_back(names[i]);
      sw.switches.push_back(lf.name);
      cfg.switches.push_back(std::move(lf));
    }
    core.switches.push_back(sw.name);
    cfg.switches.push_back(std::move(sw));
  }
  cfg.switches.push_back(std::move(core));
  s.topology = std::make_shared<const tessera::sched::TopologySnap>(
      tessera::sched::BuildTopologySnap(cfg, names));
}

// --steps 1: each action's time (wall and thread CPU, ms) summed over the timed cycles, by a
// registry whose actions wrap the built-in ones (the library is unchanged). Lazily built plugin
// state (e.g. the queue plugin's order, built at the first comparison) is charged to the action
// that first asks for it.
struct StepTimes {
  std::vector<std::string> names;               // in first-run order
  std::vector<double> wall, cpu;
  void Add(const std::string& n, double w, double c) {
    size_t i = 0;
    while (i < names.size() && names[i] != n) ++i;
    if (i == names.size()) names.push_back(n), wall.push_back(0), cpu.push_back(0);
    wall[i] += w, cpu[i] += c;
  }
};

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

class TimedAction : public tessera::sched::Action {
 public:
  TimedAction(std::unique_ptr<tessera::sched::Action> a, StepTimes* t) : a_(std::move(a)), t_(t) {}
  std::string Name() const override { return a_->Name(); }
  void Execute(tessera::sched::Session& s) override {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = ThreadCpuMs();
    a_->Execute(s);
    t_->Add(a_->Name(), std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
            ThreadCpuMs() - c0);
  }

 private:
  std::unique_ptr<tessera::sched::Action> a_;
  StepTimes* t_;
};

tessera::sched::Registry TimedRegistry(StepTimes* t) {
  using tessera::sched::Registry;
  Registry r = Registry::Builtin();
  auto builtin = std::make_shared<Registry>(Registry::Builtin());
  for (const char* name : {"enqueue", "allocate", "migplan", "preempt", "reclaim", "backfill"}) {
    if (!builtin->HasAction(name)) continue;
    std::string n = name;
    r.AddAction(n, [builtin, n, t](const tessera::sched::SchedConfig& c)
                       -> tessera::Result<std::unique_ptr<tessera::sched::Action>> {
      auto a = builtin->MakeAction(n, c);
      if (!a.ok()) return a.status();
      return std::unique_ptr<tessera::sched::Action>(new TimedAction(std::move(*a), t));
    });
  }
  return r;
}

// --digest 1 (issue 20 §2): an FNV-1a hash of the last cycle's decisions (kind, placement,
// reason, expected start, reserved nodes), to compare two builds' decisions on the same input.
uint64_t Digest(const tessera::sched::CycleResult& r) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
  };
  for (const auto& d : r.decisions) {
    mix(std::to_string(d.job_id) + (d.kind == tessera::sched::Decision::Kind::kStart ? "S" : "P") +
        d.reason + std::to_string(d.expected_start) + (d.backfilled ? "b" : ""));
    for (const auto& p : d.placement) {
      mix(p.node + ':' + std::to_string(p.cpus) + ',' + std::to_string(p.mem_mib));
      for (uint32_t g : p.gpu_indices) mix(std::to_string(g));
      for (const auto& m : p.mig_uuids) mix(m);
    }
    for (const auto& n : d.reserved_nodes) mix(n);
  }
  return h;
}

std::vector<uint32_t> ParseList(const char* s) {
  std::vector<uint32_t> out;
  for (const char* p = s; *p;) {
    out.push_back(static_cast<uint32_t>(std::strtoul(p, const_cast<char**>(&p), 10)));
    if (*p == ',') ++p;
    else if (*p) break;
  }
  return out;
}

}  // namespace

// The fair-share setup of --fairshare: config and seeded usage per (account, user).
tessera::sched::SchedConfig FairshareConfig(bool fairshare, bool drf) {
  tessera::sched::SchedConfig c;
  if (drf) c.plugins.insert(c.plugins.begin(), "drf");
  if (!fairshare) return c;
  c.weight_fairshare = 10000;
  c.weight_age = 1000;
  for (int o = 0; o < 4; ++o) {
    auto& a = c.accounts["org" + std::to_string(o)];
    a.name = "org" + std::to_string(o);
    a.fairshare = static_cast<uint32_t>(o + 1);
  }
  for (int i = 0; i < 20; ++i) {
    auto& a = c.accounts["a" + std::to_string(i)];
    a.name = "a" + std::to_string(i);
    a.parent = "org" + std::to_string(i % 4);
    a.fairshare = static_cast<uint32_t>(1 + i % 3);
  }
  return c;
}

// --queues 1 (issue 16 §2): the 20 accounts a0..a19 under org0..org3 become queues. Each org
// is guaranteed 1/8 of the GPUs (half of the cluster in all), each account 1/5 of its org's;
// Weight 1-3; org3's accounts have Limit = 1/4 of the GPUs. Queues on: the queue plugin and the
// reclaim action run in every cycle (queues.h).
void AddQueues(tessera::sched::SchedConfig& c, uint32_t nodes) {
  int64_t gpus = int64_t(nodes) * 8;
  for (int o = 0; o < 4; ++o) {
    auto& a = c.accounts["org" + std::to_string(o)];
    a.name = "org" + std::to_string(o);
    a.guarantee.gpu = gpus / 8;
  }
  for (int i = 0; i < 20; ++i) {
    auto& a = c.accounts["a" + std::to_string(i)];
    a.name = "a" + std::to_string(i);
    a.parent = "org" + std::to_string(i % 4);
    a.guarantee.gpu = gpus / 40;
    a.weight = static_cast<uint32_t>(1 + i % 3);
    if (i % 4 == 3) a.limit.gpu = gpus / 4;
  }
}

tessera::sched::UsageMap FairshareUsage(uint64_t seed) {
  std::mt19937_64 rng(seed + 7);
  tessera::sched::UsageMap u;
  for (int user = 0; user < 200; ++user)
    for (int k = 0; k < 2; ++k)
      u[{"a" + std::to_string((user + k * 7) % 20), "u" + std::to_string(user)}] =
          double(rng() % 1000000);
  return u;
}

int main(int argc, char** argv) {
  std::vector<uint32_t> nodes = {1000, 10000}, jobs = {10000, 100000};
  uint64_t seed = 1;
  int cycles = 3;
  bool mig = false, fairshare = false, drf = false, queues = false, fcfs = false;
  int preempt = 0;
  bool steps = false, full = false, digest = false;
  uint32_t bf_depth = 0;  // 0 = the config's (1, EASY)
  uint32_t oldest = 0;    // bf_oldest (0 = off, as SchedConfig{})
  double scarce = -1;     // scarce_weight (-1: SchedConfig's default)
  std::vector<uint32_t> tree;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--nodes") nodes = ParseList(argv[i + 1]);
    else if (a == "--jobs") jobs = ParseList(argv[i + 1]);
    else if (a == "--seed") seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--cycles") cycles = std::atoi(argv[i + 1]);
    else if (a == "--mig") mig = std::atoi(argv[i + 1]) != 0;
    else if (a == "--preempt") preempt = std::atoi(argv[i + 1]);
    else if (a == "--tree") tree = ParseList(argv[i + 1]);
    else if (a == "--fairshare") fairshare = std::atoi(argv[i + 1]) != 0;
    else if (a == "--drf") drf = std::atoi(argv[i + 1]) != 0;
    else if (a == "--queues") queues = std::atoi(argv[i + 1]) != 0;
    else if (a == "--fcfs") fcfs = std::atoi(argv[i + 1]) != 0;
    else if (a == "--steps") steps = std::atoi(argv[i + 1]) != 0;
    else if (a == "--full") full = std::atoi(argv[i + 1]) != 0;  // issue 20 §2
    else if (a == "--digest") digest = std::atoi(argv[i + 1]) != 0;
    else if (a == "--bf-depth") bf_depth = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    else if (a == "--oldest") oldest = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    else if (a == "--scarce") scarce = std::atof(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: sched_scale [--nodes N,..] [--jobs N,..] [--seed S] [--cycles C] [--mig 0|1] [--preempt 0|1|2] [--tree L,S] [--fairshare 0|1] [--drf 0|1] [--queues 0|1] [--fcfs 0|1] [--steps 0|1] [--full 0|1] [--digest 0|1] [--bf-depth N] [--oldest N] [--scarce W]\n");
      return 2;
    }
  }
  std::printf("%8s %8s %10s %10s %10s %8s %8s %8s %8s %8s %10s %10s\n", "nodes", "pending", "cycle_ms",
              "min_ms", "max_ms", "cpu_ms", "started", "backfill", "reserved", "mig_plan", "rss_MiB",
              "peak_MiB");
  tessera::sched::SchedConfig cfg = preempt ? PreemptConfig(preempt == 1) : tessera::sched::SchedConfig{};
  if (fcfs) cfg.weight_age = cfg.weight_time_limit = 0;
  StepTimes step_times;
  tessera::sched::Registry registry =
      steps ? TimedRegistry(&step_times) : tessera::sched::Registry::Builtin();
  for (uint32_t n : nodes)
    for (uint32_t j : jobs) {
      ClusterSnapshot snap = full ? MakeFullCluster(n, j) : MakeCluster(n, j, seed, mig);
      if (preempt) AddPreemption(snap, seed);
      if (tree.size() == 2 && tree[0] > 0 && tree[1] > 0) AddTree(snap, tree[0], tree[1]);
      if (!preempt && (fairshare || drf)) cfg = FairshareConfig(fairshare, drf);
      if (preempt && (fairshare || drf)) {  // the preemption config keeps its QoS; fair share added
        tessera::sched::SchedConfig f = FairshareConfig(fairshare, drf);
        if (drf && std::find(cfg.plugins.begin(), cfg.plugins.end(), "drf") == cfg.plugins.end())
          cfg.plugins.insert(cfg.plugins.begin(), "drf");
        cfg.weight_fairshare = f.weight_fairshare;
        for (auto& [name, a] : f.accounts) cfg.accounts[name] = a;
      }
      if (queues) AddQueues(cfg, n);
      if (bf_depth) cfg.bf_reservation_depth = bf_depth;
      if (oldest) cfg.bf_oldest = oldest, cfg.bf_oldest_wait = 3600;
      if (scarce >= 0) cfg.scarce_weight = scarce;
      tessera::sched::UsageMap usage = FairshareUsage(seed);
      double total = 0, lo = 1e18, hi = 0, cpu = 0;
      tessera::sched::CycleResult r;
      step_times = StepTimes{};
      double cycle_wall = 0, cycle_cpu = 0;
      for (int c = 0; c < cycles; ++c) {
        auto t0 = std::chrono::steady_clock::now();
        double c0 = CpuMs(), tc0 = ThreadCpuMs();
        if (fairshare) tessera::sched::FillFairshare(snap, cfg, usage);  // timed, as in ctld
        if (steps)
          step_times.Add("fairshare", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
                         ThreadCpuMs() - tc0);
        auto t1 = std::chrono::steady_clock::now();
        double tc1 = ThreadCpuMs();
        r = tessera::sched::RunCycle(snap, cfg, registry);
        cycle_wall += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
        cycle_cpu += ThreadCpuMs() - tc1;
        cpu += CpuMs() - c0;
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        total += ms, lo = std::min(lo, ms), hi = std::max(hi, ms);
      }
      std::printf("%8u %8u %10.1f %10.1f %10.1f %8.1f %8llu %8llu %8llu %8zu %10.1f %10.1f\n", n, j,
                  total / cycles, lo, hi, cpu / cycles,
                  static_cast<unsigned long long>(r.jobs_started), static_cast<unsigned long long>(r.jobs_backfilled),
                  static_cast<unsigned long long>(r.reservations), r.mig_reconfigs.size(), ReadStatusKb("VmRSS:") / 1024.0,
                  ReadStatusKb("VmHWM:") / 1024.0);
      if (steps) {  // per cycle: each action, then the rest of RunCycle (session, plugins, result)
        double aw = 0, ac = 0;
        std::printf("  steps ms wall/cpu per cycle:");
        for (size_t i = 0; i < step_times.names.size(); ++i) {
          std::printf(" %s %.1f/%.1f", step_times.names[i].c_str(), step_times.wall[i] / cycles,
                      step_times.cpu[i] / cycles);
          if (step_times.names[i] != "fairshare") aw += step_times.wall[i], ac += step_times.cpu[i];
        }
        std::printf(" other %.1f/%.1f\n", (cycle_wall - aw) / cycles, (cycle_cpu - ac) / cycles);
      }
      if (queues) {
        size_t reclaims = 0, victims = 0;
        for (const auto& p : r.preemptions)
          if (p.cause == "reclaim") ++reclaims, victims += p.victims.size();
        std::printf("  queues %zu, reclaims %zu (victims %zu)\n", r.queues.size(), reclaims, victims);
      }
      if (digest) std::printf("  decisions digest %016llx\n", static_cast<unsigned long long>(Digest(r)));
      if (preempt == 1) {
        size_t victims = 0;
        for (const auto& p : r.preemptions) victims += p.victims.size();
        std::printf("  preemptions %zu (victims %zu)\n", r.preemptions.size(), victims);
      }
      std::fflush(stdout);
    }
  return 0;
}
