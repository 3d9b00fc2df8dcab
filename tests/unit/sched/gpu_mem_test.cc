// GPUs by need (--gpu-mem, ctld/sched/gpu_mem.h): a GPU request with a memory need is served by
// the smallest fitting unit, a MIG instance or a whole GPU, whichever the cluster can give; with
// MigStrategy=dynamic the planner creates the smallest fitting profile.
#include <catch2/catch.hpp>

#include <algorithm>

#include "common/mig_profiles.h"
#include "ctld/sched/gpu_mem.h"
#include "ctld/sched/registry.h"
#include "ctld/sched/scheduler.h"

using namespace tessera;
using namespace tessera::sched;

namespace {

constexpr uint64_t kGiB = 1024;

// n1: GPU 0 whole a100 with `whole_mem` MiB; GPU 1 in MIG mode with one instance per profile
// ("MIG-<profile>"); `busy` profiles are held by a job.
NodeSnap Node(uint64_t whole_mem, const std::vector<std::string>& profiles,
              const std::vector<std::string>& busy = {}) {
  NodeSnap n;
  n.name = "n1";
  n.cpus_total = n.cpus_free = 16;
  n.mem_total = n.mem_free = 16000;
  n.partitions = {"p"};
  n.gpus.push_back({0, "a100", true, true, "", whole_mem});
  for (const auto& p : profiles)
    n.gpus.push_back({1, p, std::count(busy.begin(), busy.end(), p) == 0, true, "MIG-" + p});
  return n;
}

JobSnap Job(uint64_t id, uint64_t gpu_mem, const std::string& model = "") {
  JobSnap j;
  j.id = id;
  j.partition = "p";
  j.submit_time = static_cast<int64_t>(id);
  GroupReq g;
  g.per_task.cpus = 1;
  g.per_task.gpus = 1;
  g.per_task.gpu_model = model;
  g.per_task.gpu_mem_mib = gpu_mem;
  j.groups.push_back(g);
  return j;
}

ClusterSnapshot Cluster(std::vector<NodeSnap> nodes, std::vector<JobSnap> jobs) {
  ClusterSnapshot s;
  s.now = 1000;
  PartitionSnap p;
  p.name = "p";
  s.partitions.push_back(p);
  s.nodes = std::move(nodes);
  s.pending = std::move(jobs);
  return s;
}

const Decision& D(const CycleResult& r, uint64_t id) {
  return *std::find_if(r.decisions.begin(), r.decisions.end(),
                       [&](const Decision& d) { return d.job_id == id; });
}

// What job `id` got: "MIG-<profile>", "gpu<index>", or "" when it did not start.
std::string Got(const CycleResult& r, uint64_t id) {
  const Decision& d = D(r, id);
  if (d.kind != Decision::Kind::kStart) return "";
  const auto& p = d.placement.at(0);
  if (!p.mig_uuids.empty()) return p.mig_uuids.at(0);
  return p.gpu_indices.empty() ? "none" : "gpu" + std::to_string(p.gpu_indices.at(0));
}

const std::vector<std::string> kMixed = {"1g.10gb", "2g.20gb", "3g.40gb"};

}  // namespace

TEST_CASE("gpu-mem: profile memory comes from its name") {
  CHECK(MigProfileMemoryMiB("3g.40gb") == 40 * kGiB);
  CHECK(MigProfileMemoryMiB("1g.10gb+me") == 10 * kGiB);
  CHECK(MigProfileMemoryMiB("a100") == 0);
  CHECK(SmallestMigProfileFor("A100-80GB", 15 * kGiB) == "1g.20gb");  // 1 compute slice, 20 GB
  CHECK(SmallestMigProfileFor("A100-80GB", 21 * kGiB) == "3g.40gb");
  CHECK(SmallestMigProfileFor("A100-80GB", 90 * kGiB) == "");
}

TEST_CASE("gpu-mem: the smallest fitting unit serves the job, MIG instance or whole GPU") {
  auto node = Node(80 * kGiB, kMixed);
  CHECK(Got(RunCycle(Cluster({node}, {Job(1, 8 * kGiB)})), 1) == "MIG-1g.10gb");
  CHECK(Got(RunCycle(Cluster({node}, {Job(1, 15 * kGiB)})), 1) == "MIG-2g.20gb");
  CHECK(Got(RunCycle(Cluster({node}, {Job(1, 40 * kGiB)})), 1) == "MIG-3g.40gb");
  CHECK(Got(RunCycle(Cluster({node}, {Job(1, 50 * kGiB)})), 1) == "gpu0");
  // Three jobs in one cycle each take the smallest that is still free.
  auto r = RunCycle(Cluster({node}, {Job(1, 8 * kGiB), Job(2, 8 * kGiB), Job(3, 8 * kGiB)}));
  CHECK(Got(r, 1) == "MIG-1g.10gb");
  CHECK(Got(r, 2) == "MIG-2g.20gb");
  CHECK(Got(r, 3) == "MIG-3g.40gb");
}

TEST_CASE("gpu-mem: a busy smallest unit gives the next fitting one; too much memory waits") {
  auto node = Node(80 * kGiB, kMixed, {"2g.20gb"});
  CHECK(Got(RunCycle(Cluster({node}, {Job(1, 15 * kGiB)})), 1) == "MIG-3g.40gb");
  auto r = RunCycle(Cluster({node}, {Job(1, 100 * kGiB)}));
  CHECK(D(r, 1).kind == Decision::Kind::kPending);
  CHECK(D(r, 1).reason == "Resources");
}

TEST_CASE("gpu-mem: a whole GPU of unknown memory never serves a memory request") {
  auto node = Node(0, {});
  CHECK(Got(RunCycle(Cluster({node}, {Job(1, 1 * kGiB)})), 1) == "");
  // The same GPU serves a request without --gpu-mem.
  CHECK(Got(RunCycle(Cluster({node}, {Job(1, 0)})), 1) == "gpu0");
}

TEST_CASE("gpu-mem: a named type filters: only whole GPUs of that type with enough memory") {
  auto node = Node(40 * kGiB, kMixed);
  CHECK(Got(RunCycle(Cluster({node}, {Job(1, 8 * kGiB, "a100")})), 1) == "gpu0");
  CHECK(Got(RunCycle(Cluster({node}, {Job(1, 50 * kGiB, "a100")})), 1) == "");
}

TEST_CASE("gpu-mem: submit check tells busy from never") {
  ClusterSnapshot empty = Cluster({Node(80 * kGiB, kMixed)}, {});
  CHECK(CheckSatisfiable(Job(1, 60 * kGiB), empty).ok());
  Status st = CheckSatisfiable(Job(1, 100 * kGiB), empty);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("--gpu-mem=102400M") != std::string::npos);
  CHECK(st.message().find("never be satisfied") != std::string::npos);
}

TEST_CASE("gpu-mem: with MigStrategy=dynamic the smallest fitting profile is created") {
  // GPU 1 (A100-80GB, dynamic) has 7 x 1g.10gb; a 15 GiB need fits none of them: migplan
  // creates the smallest profile with 15 GiB (1g.20gb), the job waits MigReconfiguring.
  NodeSnap n = Node(0, {});
  n.gpus.clear();
  MigGpuSnap g;
  g.index = 1;
  g.mig_model = "A100-80GB";
  g.mig_enabled = true;
  g.dynamic = true;
  for (uint32_t s = 0; s < 7; ++s) {
    std::string uuid = "MIG-1g-" + std::to_string(s);
    g.instances.push_back({"1g.10gb", s, uuid, true});
    n.gpus.push_back({1, "1g.10gb", true, true, uuid});
  }
  n.mig_gpus = {g};
  SchedConfig cfg;
  auto r = RunCycle(Cluster({n}, {Job(1, 15 * kGiB)}), cfg, Registry::Builtin());
  REQUIRE(r.mig_reconfigs.size() == 1);
  CHECK(r.mig_reconfigs[0].create.size() == 1);
  CHECK(r.mig_reconfigs[0].create[0].first == "1g.20gb");
  CHECK(D(r, 1).reason == "MigReconfiguring");
  // A 5 GiB need is served now by an existing 1g.10gb.
  CHECK(Got(RunCycle(Cluster({n}, {Job(2, 5 * kGiB)}), cfg, Registry::Builtin()), 2) == "MIG-1g-0");
}
