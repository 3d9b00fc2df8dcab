// MIG device rules (issue 14 §2): a job on a MIG instance gets its parent GPU and the
// nvidia-caps GI/CI access devices of that instance only, read from an injectable proc tree
// (as the NVIDIA container toolkit does), deterministic stand-ins for simulated GPUs.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "noded/job_isolation.h"
#include "noded/mig_caps.h"

using namespace tessera;
using namespace tessera::noded;
namespace fs = std::filesystem;

namespace {

// A fake /proc with nvidia-caps major 237 and, for GPU minor 1, GI 3 (minors 30/31) and GI 5
// (minors 50/51).
fs::path FakeProc() {
  fs::path root = fs::temp_directory_path() / ("tessera-migcaps-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "devices") << "Character devices:\n  1 mem\n195 nvidia\n237 nvidia-caps\n"
                                     "\nBlock devices:\n  8 sd\n";
  for (auto [gi, minor] : {std::pair{3, 30}, std::pair{5, 50}}) {
    fs::path d = root / "driver/nvidia/capabilities/gpu1/mig" / ("gi" + std::to_string(gi));
    fs::create_directories(d / "ci0");
    std::ofstream(d / "access") << "DeviceFileMinor: " << minor << "\nDeviceFileMode: 292\n";
    std::ofstream(d / "ci0/access") << "DeviceFileMinor: " << minor + 1 << "\n";
  }
  return root;
}

GpuInfo MigGpu(bool simulated) {
  GpuInfo g;
  g.index = 1;
  g.minor = 1;
  g.simulated = simulated;
  g.mig_enabled = true;
  g.mig = {{"3g.40gb", 0, 4, "MIG-a", 3}, {"3g.40gb", 4, 4, "MIG-b", 5}};
  return g;
}

}  // namespace

TEST_CASE("nvidia-caps rules come from the proc tree's access files") {
  fs::path proc = FakeProc();
  auto r = MigCapRules(proc.string(), 1, 3);
  REQUIRE(r.ok());
  CHECK(*r == std::vector<DeviceRule>{{'c', 237, 30, "rwm"}, {'c', 237, 31, "rwm"}});
  auto missing = MigCapRules(proc.string(), 1, 7);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("gpu1/mig/gi7/access") != std::string::npos);
  std::ofstream(proc / "driver/nvidia/capabilities/gpu1/mig/gi5/access") << "DeviceFileMinor: x\n";
  CHECK(MigCapRules(proc.string(), 1, 5).status().message().find("bad DeviceFileMinor") !=
        std::string::npos);
  fs::remove_all(proc);
}

TEST_CASE("a real GPU without readable caps gets no rule and a message, simulated ones get stand-ins") {
  std::vector<std::string> errors;
  auto real = MigDeviceRules({MigGpu(false)}, "/nonexistent-proc", &errors);
  CHECK(real.empty());
  CHECK(errors.size() == 2);
  auto sim = MigDeviceRules({MigGpu(true)}, "/nonexistent-proc", nullptr);
  REQUIRE(sim.size() == 2);
  CHECK(sim["MIG-a"] == std::vector<DeviceRule>{{'c', kSimulatedNvidiaCapsMajor, 1106, "rwm"},
                                                {'c', kSimulatedNvidiaCapsMajor, 1107, "rwm"}});
  CHECK(sim["MIG-a"] != sim["MIG-b"]);
}

TEST_CASE("a job on one MIG instance opens its parent GPU and only that instance's caps") {
  fs::path proc = FakeProc();
  IsolationFacts f;
  f.node_name = "n1";
  f.cgroup_root = "/sys/fs/cgroup";
  f.cgroup_parent = "tessera/n1";
  GpuInfo g0;
  g0.index = 0;
  f.gpus = {g0, MigGpu(false)};
  f.gpu_shared_devices = {{'c', 195, 255, "rwm"}};
  f.mig_devices = MigDeviceRules(f.gpus, proc.string(), nullptr);
  tessera::v1::LaunchJob l;
  l.set_job_id(3);
  auto* al = l.add_alloc();
  al->set_node("n1");
  al->set_cpus(1);
  al->add_mig_uuids("MIG-b");
  JobIsolation iso = PlanJobIsolation(l, f, {0});
  auto has = [&](DeviceRule r) {
    return std::find(iso.cgroup.devices.begin(), iso.cgroup.devices.end(), r) !=
           iso.cgroup.devices.end();
  };
  CHECK(has({'c', 195, 1, "rwm"}));
  CHECK(has({'c', 195, 255, "rwm"}));
  CHECK(has({'c', 237, 50, "rwm"}));
  CHECK(has({'c', 237, 51, "rwm"}));
  CHECK_FALSE(has({'c', 237, 30, "rwm"}));  // the other instance
  CHECK_FALSE(has({'c', 195, 0, "rwm"}));
  fs::remove_all(proc);
}

TEST_CASE("after a re-slice the planner opens the new instances' devices, not the old ones'") {
  fs::path proc = FakeProc();
  IsolationFacts f;
  f.node_name = "n1";
  f.cgroup_root = "/sys/fs/cgroup";
  f.cgroup_parent = "tessera/n1";
  f.nvidia_proc = proc.string();
  GpuInfo g = MigGpu(false);
  g.index = 0;  // facts hold GPUs by index: a one-GPU node whose GPU has device minor 1
  g.mig = {{"3g.40gb", 0, 4, "MIG-a", 3}};
  f.gpus = {g};
  f.mig_devices = MigDeviceRules(f.gpus, f.nvidia_proc, nullptr);
  IsolationPlanner planner(f, CoreMap({0, 1}));
  g.mig = {{"3g.40gb", 4, 4, "MIG-new", 5}};  // the layout after tcontrol update ... MigLayout=
  planner.UpdateGpu(g);
  tessera::v1::LaunchJob l;
  l.set_job_id(4);
  auto* al = l.add_alloc();
  al->set_node("n1");
  al->set_cpus(1);
  al->add_mig_uuids("MIG-new");
  JobIsolation iso = planner.Plan(l);
  auto has = [&](DeviceRule r) {
    return std::find(iso.cgroup.devices.begin(), iso.cgroup.devices.end(), r) !=
           iso.cgroup.devices.end();
  };
  CHECK(has({'c', 195, 1, "rwm"}));
  CHECK(has({'c', 237, 50, "rwm"}));
  CHECK(has({'c', 237, 51, "rwm"}));
  CHECK_FALSE(has({'c', 237, 30, "rwm"}));
  fs::remove_all(proc);
}
