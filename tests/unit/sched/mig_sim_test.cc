// tessera-sim's dynamic MIG comparison (sim/mig_sim.h): deterministic, every job runs, the
// dynamic policy re-lays GPUs and beats fixed layouts on a workload whose profile mix shifts.
#include <catch2/catch.hpp>

#include <set>

#include "sim/mig_sim.h"

using namespace tessera::sim;

TEST_CASE("MIG sim: generated workload is deterministic and mixes profile sizes") {
  MigWorkloadOptions o;
  o.jobs = 90;
  auto a = GenerateMigWorkload(o), b = GenerateMigWorkload(o);
  REQUIRE(a.size() == 90);
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].submit == b[i].submit);
    CHECK(a[i].profile == b[i].profile);
  }
  std::set<std::string> seen;
  for (const auto& j : a) seen.insert(j.profile);
  CHECK(seen.size() == 4);
}

TEST_CASE("MIG sim: dynamic re-lays GPUs, runs every job and waits less than static layouts") {
  MigWorkloadOptions o;
  o.jobs = 300;
  auto work = GenerateMigWorkload(o);
  auto whole = SimulateMig(o, work, MigMode::kWholeGpu);
  auto fixed = SimulateMig(o, work, MigMode::kStatic);
  auto dyn = SimulateMig(o, work, MigMode::kDynamic);
  CHECK(whole.finished == 300);
  CHECK(fixed.finished == 300);
  CHECK(dyn.finished == 300);
  CHECK(fixed.reconfigs == 0);
  CHECK(dyn.reconfigs > 0);
  CHECK(dyn.mean_wait < fixed.mean_wait);
  CHECK(dyn.gpu_mem_util > whole.gpu_mem_util);
  auto again = SimulateMig(o, work, MigMode::kDynamic);
  CHECK(again.mean_wait == dyn.mean_wait);
  CHECK(again.reconfigs == dyn.reconfigs);
}
