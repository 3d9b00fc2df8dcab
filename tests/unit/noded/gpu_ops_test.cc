// Issue 14, GPU operations on the node: NVML names mapped to configured types, the simulated
// backend's model by Type and memory, a bad gres.conf GPU line costing only its GPUs, the saved
// MIG layout's win noted, and the controller's drain/resume of a GPU (a repeated XID after a
// resume is reported again).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "common/mig_profiles.h"
#include "noded/gpu_backend.h"
#include "noded/gpu_manager.h"
#include "noded/gpu_types.h"

using namespace tessera;
using namespace tessera::noded;

namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/tessera-gpuops-XXXXXX";
  return mkdtemp(tmpl);
}

bool Contains(const std::vector<std::string>& notes, const std::string& what) {
  for (const auto& n : notes)
    if (n.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("NVML product names map to the configured Type") {
  std::vector<std::string> types = {"a100", "h100", "h200", "a30"};
  CHECK(MatchConfiguredType("A100-SXM4-40GB", 40960, types) == "a100");
  CHECK(MatchConfiguredType("NVIDIA A100 80GB PCIe", 81920, types) == "a100");
  CHECK(MatchConfiguredType("NVIDIA H100 80GB HBM3", 81559, types) == "h100");
  CHECK(MatchConfiguredType("NVIDIA H200", 143771, types) == "h200");
  CHECK(MatchConfiguredType("NVIDIA A30", 24576, types) == "a30");
  // Through the MIG tables' aliases (no substring in common).
  CHECK(MatchConfiguredType("NVIDIA H100 80GB HBM3", 81559, {"h100-sxm5-80gb"}) ==
        "h100-sxm5-80gb");
  CHECK(MatchConfiguredType("NVIDIA A100 80GB PCIe", 81920, {"a100-40gb", "a100-80gb"}) ==
        "a100-80gb");
  // Case-insensitive, exact match first.
  CHECK(MatchConfiguredType("NVIDIA A30", 24576, {"A30"}) == "A30");
  CHECK(MatchConfiguredType("NVIDIA H100 80GB HBM3", 81559, {"a100", "l40s"}).empty());
}

TEST_CASE("NVML devices take the configured type, a name matching none is warned about") {
  std::vector<GpuDecl> decls = {{"h100", 2, 0, false, "gres.conf:3"}};
  std::vector<GpuInfo> gpus(3);
  for (uint32_t i = 0; i < 3; ++i) gpus[i].index = i, gpus[i].memory_mib = 81559;
  gpus[0].model = gpus[1].model = "NVIDIA H100 80GB HBM3";
  gpus[2].model = "NVIDIA L40S";
  auto notes = ApplyConfiguredTypes(gpus, decls);
  CHECK(gpus[0].model == "h100");
  CHECK(gpus[1].model == "h100");
  CHECK(gpus[2].model == "NVIDIA L40S");
  CHECK(Contains(notes, "GPU 0: NVML name 'NVIDIA H100 80GB HBM3' is gres.conf Type=h100"));
  CHECK(Contains(notes, "warning: GPU 2: NVML reports 'NVIDIA L40S', which matches no Type="));
  CHECK(Contains(notes, "h100 at gres.conf:3"));
  // Untyped or simulated-only configurations leave NVML's names alone.
  std::vector<GpuInfo> same = {gpus[2]};
  CHECK(ApplyConfiguredTypes(same, {{"", 1, 0, false, "gres.conf:1"}}).empty());
  CHECK(same[0].model == "NVIDIA L40S");
}

TEST_CASE("MIG tables by Type and memory: a100 with 80 GB is the A100 80GB") {
  CHECK(std::string(FindMigModelFor("a100", 81920)->name) == "A100-80GB");
  CHECK(std::string(FindMigModelFor("a100", 40960)->name) == "A100-SXM4-40GB");
  CHECK(std::string(FindMigModelFor("a100", 0)->name) == "A100-SXM4-40GB");
  CHECK(std::string(FindMigModelFor("h100", 96256)->name) == "H100-NVL-94GB");
  CHECK(std::string(FindMigModelFor("NVIDIA H100 80GB HBM3", 81559)->name) == "H100-80GB");
  CHECK(std::string(FindMigModelFor("a100", 8192)->name) == "A100-SXM4-40GB");  // too far: name
  CHECK(FindMigModelFor("l40s", 49152) == nullptr);
  // The simulated backend uses it: 80 GB profiles on a Type=a100 MemoryMiB=81920 GPU.
  std::vector<GpuDecl> decls = {{"a100", 1, 81920, true, "gres.conf:1"}};
  SimGpuOptions o;
  o.mig_enabled = true;
  o.mig_layout = {"3g.40gb", "4g.40gb"};
  SimulatedGpuBackend b("c", "n1", decls, {o}, "");
  auto gpus = b.Discover();
  REQUIRE(gpus.ok());
  INFO((*gpus)[0].health_reason);
  CHECK((*gpus)[0].healthy);
  CHECK((*gpus)[0].mig.size() == 2);
  CHECK(b.ConfigureMig(0, {}, {(*gpus)[0].mig[0].uuid}).ok());
}

TEST_CASE("a bad GPU line costs only its GPUs, reported unhealthy naming file:line") {
  std::vector<GpuDecl> decls = {{"a100", 1, 40960, true, "gres.conf:1"},
                                {"l40s", 1, 49152, true, "gres.conf:2"},
                                {"h100", 1, 81920, true, "gres.conf:3"}};
  SimGpuOptions plain, unknown, invalid;
  unknown.mig_enabled = true;
  invalid.mig_enabled = true;
  invalid.mig_layout = {"4g.40gb@0", "7g.80gb"};
  SimulatedGpuBackend b("c", "n1", decls, {plain, unknown, invalid}, "");
  auto gpus = b.Discover();
  REQUIRE(gpus.ok());
  REQUIRE(gpus->size() == 3);
  CHECK((*gpus)[0].healthy);
  CHECK_FALSE((*gpus)[1].healthy);
  CHECK((*gpus)[1].health_reason.find("gres.conf:2: MigEnabled=yes but GPU type 'l40s'") == 0);
  CHECK_FALSE((*gpus)[2].healthy);
  CHECK((*gpus)[2].health_reason.find("gres.conf:3: MigLayout for GPU 2") == 0);
  auto notes = b.TakeNotes();
  CHECK(Contains(notes, "GPU 1 reported unhealthy: gres.conf:2"));
  CHECK(Contains(notes, "GPU 2 reported unhealthy: gres.conf:3"));
}

TEST_CASE("a saved MIG layout wins over gres.conf and says so") {
  std::string dir = TempDir();
  std::vector<GpuDecl> decls = {{"h100", 1, 81920, true, "gres.conf:4"}};
  SimGpuOptions o;
  o.mig_enabled = true;
  o.mig_layout = {"7g.80gb"};
  {
    SimulatedGpuBackend b("c", "n1", decls, {o}, dir);
    auto g = b.Discover();
    REQUIRE(g.ok());
    CHECK(b.TakeNotes().empty());  // nothing saved yet: gres.conf's layout, nothing to say
    REQUIRE(b.ConfigureMig(0, {{"3g.40gb", 0}, {"3g.40gb", 4}}, {(*g)[0].mig[0].uuid}).ok());
  }
  SimulatedGpuBackend again("c", "n1", decls, {o}, dir);
  REQUIRE(again.Discover()->at(0).mig.size() == 2);
  auto notes = again.TakeNotes();
  CHECK(Contains(notes, "GPU 0: MIG layout 3g.40gb@0,3g.40gb@4 saved in " + dir +
                            "/gpu.0.mig (the last reconfiguration) wins over gres.conf's "
                            "MigLayout 7g.80gb@0 (gres.conf:4)"));
  // A saved layout not valid for the model: gres.conf's is used, and that is said.
  std::ofstream(dir + "/gpu.0.mig") << "9g.99gb@0\n";
  SimulatedGpuBackend third("c", "n1", decls, {o}, dir);
  CHECK(third.Discover()->at(0).mig.size() == 1);
  CHECK(Contains(third.TakeNotes(), "is not valid"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("after the controller resumes a GPU a repeated XID is reported again") {
  std::string dir = TempDir();
  std::vector<GpuDecl> decls = {{"a100", 2, 40960, true, "gres.conf:1"}};
  SimulatedGpuBackend b("c", "n1", decls, {}, dir);
  auto gpus = b.Discover();
  REQUIRE(gpus.ok());
  GpuManager mgr(b, *gpus, {}, [](const std::string&) {});
  std::ofstream(dir + "/inject-xid.1") << "79\n";
  mgr.Poll();
  REQUIRE(mgr.TakeOutbox().size() == 1);
  std::ofstream(dir + "/inject-xid.1") << "79\n";
  mgr.Poll();
  CHECK(mgr.TakeOutbox().empty());  // still drained: the same XID is not news
  mgr.SetDrain(1, false, "");
  CHECK(mgr.gpus()[1].healthy);
  std::ofstream(dir + "/inject-xid.1") << "79\n";
  mgr.Poll();
  auto out = mgr.TakeOutbox();
  REQUIRE(out.size() == 1);
  CHECK(out[0].gpu_health().xid() == 79);
  // Registration: the controller's list is the truth for every GPU.
  mgr.SyncDrains({{0, "maintenance"}});
  CHECK_FALSE(mgr.gpus()[0].healthy);
  CHECK(mgr.gpus()[0].health_reason == "maintenance");
  CHECK(mgr.gpus()[1].healthy);
  std::filesystem::remove_all(dir);
}
