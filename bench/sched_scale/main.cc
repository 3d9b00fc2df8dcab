// sched_scale: cycle time and memory of tessera_sched's RunCycle on synthetic clusters.
//
//   sched_scale [--nodes 1000,10000] [--jobs 10000,100000] [--seed 1] [--cycles 3] [--mig 1]
//
// --mig 1 (dynamic MIG planning on): every 4th node's 8 GPUs are MIG-mode H100-80GB with
// MigStrategy=dynamic and 7 x 1g.10gb each (the scheduler sees 56 instance units), running jobs
// there hold all instances of the GPUs they hold, and 10% of the queue asks 1-2 instances of a
// MIG profile (1g.10gb, 2g.20gb, 3g.40gb, 7g.80gb) that mostly no layout offers, so the migplan
// action plans up to mig_plan_depth of them per cycle.
//
// Each cluster has nodes of 64 CPUs, 512 GiB and 8 GPUs (3/4 h100, 1/4 a100), a "main"
// partition over all nodes and a "debug" partition over the first 5%. About half the GPUs are
// held by running jobs that end within a day. The queue mixes single-GPU jobs, CPU jobs,
// multi-node GPU gangs, launcher+worker task groups, constraints and array throttles; the
// generator is a seeded mt19937_64, so a run is reproducible. A "cycle" is the full RunCycle
// with the default configuration (multifactor priority, gang allocation, EASY backfill over
// every pending job).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "ctld/sched/scheduler.h"

namespace {

using tessera::sched::ClusterSnapshot;
using tessera::sched::JobSnap;

long ReadStatusKb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::strtol(line.c_str() + std::string(key).size(), nullptr, 10);
  return -1;
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
    bool mig_node = mig && i % 4 == 3;
    for (uint32_t g = 0; g < 8 && !mig_node; ++g) n.gpus.push_back({g, model, true, true});
    for (uint32_t g = 0; g < 8 && mig_node; ++g) {
      tessera::sched::MigGpuSnap mg{g, "H100-80GB", true, true, false, {}, 0, {}};
      for (uint32_t st = 0; st < 7; ++st) {
        std::string uuid = "MIG-" + std::to_string(i) + "-" + std::to_string(g) + "-" + std::to_string(st);
        mg.instances.push_back({"1g.10gb", st, uuid, true});
        n.gpus.push_back({g, "1g.10gb", true, true, uuid});
      }
      n.mig_gpus.push_back(std::move(mg));
    }
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
    for (auto& u : n.gpus) u.free = u.free && u.index >= gpus;
    for (auto& mg : n.mig_gpus)
      for (auto& inst : mg.instances) inst.free = inst.free && mg.index >= gpus;
    n.idle = false;
    s.running.push_back(std::move(r));
  }
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
    static const char* const kProfiles[] = {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"};
    if (mig && kind < 10) {   // one task, 1-2 instances of a MIG profile
      js.groups.push_back({"main", 1, {4, 16384, static_cast<uint32_t>(uni(1, 2)), kProfiles[uni(0, 3)]}, 0, {}});
    } else if (kind < 50) {          // one task, 1-2 GPUs
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
    if (uni(0, 9) == 0) js.constraint = uni(0, 1) ? "ib" : "a100|h100";
    if (uni(0, 49) == 0) {
      js.array_job_id = 900 + uni(0, 9);
      js.array_max_running = 4;
    }
    s.pending.push_back(std::move(js));
  }
  return s;
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

int main(int argc, char** argv) {
  std::vector<uint32_t> nodes = {1000, 10000}, jobs = {10000, 100000};
  uint64_t seed = 1;
  int cycles = 3;
  bool mig = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--nodes") nodes = ParseList(argv[i + 1]);
    else if (a == "--jobs") jobs = ParseList(argv[i + 1]);
    else if (a == "--seed") seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--cycles") cycles = std::atoi(argv[i + 1]);
    else if (a == "--mig") mig = std::atoi(argv[i + 1]) != 0;
    else {
      std::fprintf(stderr, "usage: sched_scale [--nodes N,..] [--jobs N,..] [--seed S] [--cycles C] [--mig 0|1]\n");
      return 2;
    }
  }
  std::printf("%8s %8s %10s %10s %10s %8s %8s %8s %10s %10s%s\n", "nodes", "pending", "cycle_ms",
              "min_ms", "max_ms", "started", "backfill", "reserved", "rss_MiB", "peak_MiB",
              mig ? "  mig_reconf" : "");
  for (uint32_t n : nodes)
    for (uint32_t j : jobs) {
      ClusterSnapshot snap = MakeCluster(n, j, seed, mig);
      double total = 0, lo = 1e18, hi = 0;
      tessera::sched::CycleResult r;
      for (int c = 0; c < cycles; ++c) {
        auto t0 = std::chrono::steady_clock::now();
        r = tessera::sched::RunCycle(snap);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        total += ms, lo = std::min(lo, ms), hi = std::max(hi, ms);
      }
      std::printf("%8u %8u %10.1f %10.1f %10.1f %8llu %8llu %8llu %10.1f %10.1f", n, j, total / cycles, lo, hi,
                  static_cast<unsigned long long>(r.jobs_started), static_cast<unsigned long long>(r.jobs_backfilled),
                  static_cast<unsigned long long>(r.reservations), ReadStatusKb("VmRSS:") / 1024.0,
                  ReadStatusKb("VmHWM:") / 1024.0);
      if (mig) std::printf(" %11zu", r.mig_reconfigs.size());
      std::printf("\n");
      std::fflush(stdout);
    }
  return 0;
}
