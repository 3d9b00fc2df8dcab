// RDMA per job (issue 14 §5): each HCA port's own /dev/infiniband devices, one link layer per
// job (InfiniBand preferred), RoCE interfaces from sysfs for NCCL_SOCKET_IFNAME.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "noded/job_env.h"
#include "noded/job_isolation.h"
#include "noded/rdma.h"

using namespace tessera;
using namespace tessera::noded;
namespace fs = std::filesystem;

namespace {

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::vector<std::string> Names(const std::vector<RdmaPort>& v) {
  std::vector<std::string> out;
  for (const auto& p : v) out.push_back(p.Name());
  return out;
}

RdmaPort Port(const std::string& dev, const std::string& ll, int numa,
              std::vector<std::string> chars, const std::string& netdev = "") {
  RdmaPort p;
  p.device = dev;
  p.state = "ACTIVE";
  p.link_layer = ll;
  p.numa_node = numa;
  p.char_devices = std::move(chars);
  p.netdev = netdev;
  return p;
}

}  // namespace

TEST_CASE("sysfs names each HCA port's uverbs/umad devices and a RoCE port's interface") {
  char tmpl[] = "/tmp/tessera-sysfs-XXXXXX";
  fs::path root = mkdtemp(tmpl);
  struct Hca { std::string name, ll; fs::path dev; int verbs; };
  std::vector<Hca> hcas = {{"mlx5_0", "InfiniBand", root / "devices/pci0000:00/0000:03:00.0", 0},
                           {"mlx5_1", "Ethernet", root / "devices/pci0000:80/0000:85:00.0", 1},
                           {"mlx5_2", "Ethernet", root / "devices/pci0000:80/0000:86:00.0", 2}};
  for (const auto& h : hcas) {
    Write(h.dev / "numa_node", "0\n");
    fs::path cls = root / "class/infiniband" / h.name;
    fs::create_directories(cls);
    fs::create_directory_symlink(h.dev, cls / "device");
    Write(cls / "ports/1/state", "4: ACTIVE\n");
    Write(cls / "ports/1/link_layer", h.ll + "\n");
    std::string n = std::to_string(h.verbs);
    Write(h.dev / ("infiniband_verbs/uverbs" + n + "/ibdev"), h.name + "\n");
    Write(h.dev / ("infiniband_mad/umad" + n + "/port"), "1\n");
  }
  // A second port's umad of mlx5_0 belongs to port 2, not port 1.
  Write(hcas[0].dev / "infiniband_mad/umad9/port", "2\n");
  // mlx5_1: its interface is found through /sys/class/net (device -> the same PCI function).
  fs::create_directories(root / "class/net/eth2");
  fs::create_directory_symlink(hcas[1].dev, root / "class/net/eth2/device");
  fs::create_directories(root / "class/net/lo");
  // mlx5_2: through gid_attrs/ndevs/0.
  Write(root / "class/infiniband/mlx5_2/ports/1/gid_attrs/ndevs/0", "ens3\n");
  auto ports = DiscoverRdma(root.string());
  REQUIRE(ports.ok());
  REQUIRE(ports->size() == 3);
  CHECK((*ports)[0].char_devices == std::vector<std::string>{"uverbs0", "umad0"});
  CHECK((*ports)[0].netdev.empty());  // InfiniBand
  CHECK((*ports)[1].char_devices == std::vector<std::string>{"uverbs1", "umad1"});
  CHECK((*ports)[1].netdev == "eth2");
  CHECK((*ports)[2].netdev == "ens3");
  // CPU-only job: InfiniBand only, never mixed with RoCE.
  CHECK(Names(ChooseHcas({}, *ports)) == std::vector<std::string>{"mlx5_0:1"});
  std::vector<RdmaPort> roce = {(*ports)[1], (*ports)[2]};
  CHECK(Names(ChooseHcas({}, roce)) == std::vector<std::string>{"mlx5_1:1", "mlx5_2:1"});
  fs::remove_all(root);
}

TEST_CASE("a job's cgroup opens only its HCA's /dev/infiniband devices; RoCE names its netdev") {
  IsolationFacts f;
  f.node_name = "n1";
  f.cgroup_root = "/sys/fs/cgroup";
  GpuInfo g0, g1;
  g0.index = 0, g0.minor = 0, g0.numa_node = 0;
  g1.index = 1, g1.minor = 1, g1.numa_node = 1;
  f.gpus = {g0, g1};
  DeviceRule uv0{'c', 231, 192, "rwm"}, uv1{'c', 231, 193, "rwm"}, um0{'c', 231, 0, "rwm"},
      um1{'c', 231, 1, "rwm"}, cm{'c', 10, 58, "rwm"};
  f.rdma_devices = {uv0, uv1, um0, um1, cm};
  f.rdma_devices_by_name = {{"uverbs0", uv0}, {"uverbs1", uv1}, {"umad0", um0},
                            {"umad1", um1}, {"rdma_cm", cm}};
  f.hcas = {Port("mlx5_0", "InfiniBand", 0, {"uverbs0", "umad0"}),
            Port("mlx5_1", "InfiniBand", 1, {"uverbs1", "umad1"})};
  tessera::v1::LaunchJob l;
  l.set_job_id(5);
  auto* a = l.add_alloc();
  a->set_node("n1");
  a->set_cpus(1);
  a->add_gpu_indices(1);
  JobIsolation iso = PlanJobIsolation(l, f, {0});
  CHECK(iso.hcas == std::vector<std::string>{"mlx5_1:1"});
  auto has = [&](const DeviceRule& r) {
    return std::find(iso.cgroup.devices.begin(), iso.cgroup.devices.end(), r) !=
           iso.cgroup.devices.end();
  };
  CHECK(has(uv1));
  CHECK(has(um1));
  CHECK(has(cm));
  CHECK_FALSE(has(uv0));
  CHECK_FALSE(has(um0));
  // Discovery that named no device: every /dev/infiniband device, as before.
  IsolationFacts old = f;
  old.hcas = {Port("mlx5_0", "InfiniBand", 0, {}), Port("mlx5_1", "InfiniBand", 1, {})};
  JobIsolation all = PlanJobIsolation(l, old, {0});
  CHECK(std::count(all.cgroup.devices.begin(), all.cgroup.devices.end(), uv0) == 1);
  // RoCE only: the port's interface travels in the isolation file and reaches the env.
  IsolationFacts r = f;
  r.hcas = {Port("mlx5_2", "Ethernet", 1, {"uverbs1"}, "eth2")};
  JobIsolation ri = PlanJobIsolation(l, r, {0});
  CHECK(ri.netdevs == std::vector<std::string>{"eth2"});
  auto back = ParseJobIsolation(FormatJobIsolation(ri));
  REQUIRE(back.ok());
  CHECK(back->netdevs == ri.netdevs);
  NodeFacts facts;
  facts.node_name = "n1";
  facts.gpu_uuids = {"GPU-0", "GPU-1"};
  facts.hcas = ri.hcas;
  facts.netdevs = ri.netdevs;
  UserInfo u{"alice", "/home/alice", "/bin/sh"};
  l.set_user("alice");
  EnvMap env = BuildJobEnv(l, facts, u);
  CHECK(env["NCCL_IB_HCA"] == "mlx5_2:1");
  CHECK(env["UCX_NET_DEVICES"] == "mlx5_2:1");
  CHECK(env["NCCL_SOCKET_IFNAME"] == "eth2");
  EnvMap inherited{{"NCCL_SOCKET_IFNAME", "ib0"}};
  SetRoceEnv({}, inherited, true);
  CHECK(inherited.count("NCCL_SOCKET_IFNAME") == 0);
}

TEST_CASE("character devices by name") {
  auto devs = CharDeviceRulesByName("/dev");
  REQUIRE(devs.count("null") == 1);
  CHECK(devs["null"] == DeviceRule{'c', 1, 3, "rwm"});
  CHECK(CharDeviceRulesByName("/nonexistent").empty());
}
