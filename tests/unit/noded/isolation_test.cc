// Cgroup mode detection, device rules, BPF program shape, core map, isolation plans and files,
// RDMA discovery on a fake sysfs tree and GPU-NIC affinity.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "noded/batch_cgroups.h"
#include "noded/bpf_device.h"
#include "noded/cgroup.h"
#include "noded/core_map.h"
#include "noded/job_isolation.h"
#include "noded/rdma.h"

using namespace tessera;
using namespace tessera::noded;
namespace fs = std::filesystem;

TEST_CASE("cgroup mode: v1 controllers, unified root, or none") {
  std::string hybrid =
      "tmpfs /sys/fs/cgroup tmpfs rw 0 0\n"
      "cgroup /sys/fs/cgroup/cpuset cgroup rw,relatime,cpuset 0 0\n"
      "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
      "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n"
      "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";
  auto m = DetectCgroups(hybrid, "/sys/fs/cgroup/");
  CHECK(m.mode == CgroupMode::kV1);
  CHECK(m.v1.at("memory") == "/sys/fs/cgroup/memory");
  CHECK(m.v1.count("pids") == 0);
  auto v2 = DetectCgroups("cgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate 0 0\n", "/sys/fs/cgroup");
  CHECK(v2.mode == CgroupMode::kV2);
  CHECK(v2.unified == "/sys/fs/cgroup");
  CHECK(DetectCgroups("proc /proc proc rw 0 0\n", "/sys/fs/cgroup").mode == CgroupMode::kNone);
  CHECK(DetectCgroups(hybrid, "/elsewhere").mode == CgroupMode::kNone);
  CHECK(MakeCgroupManager(DetectCgroups("", "/x")) == nullptr);
  // favordynmods: global, so any cgroup mount naming it (a hybrid host's unified one too).
  CHECK_FALSE(m.favordynmods);
  CHECK_FALSE(v2.favordynmods);
  CHECK(DetectCgroups("cgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate,favordynmods 0 0\n",
                      "/sys/fs/cgroup").favordynmods);
  CHECK(DetectCgroups(hybrid + "cgroup2 /x cgroup2 rw,favordynmods 0 0\n", "/sys/fs/cgroup/")
            .favordynmods);
  CHECK_FALSE(DetectCgroups("tmpfs /t tmpfs rw,favordynmods 0 0\n", "/sys/fs/cgroup").favordynmods);
}

TEST_CASE("device rules round-trip and bad ones are named") {
  for (const auto& r : StandardDeviceRules()) {
    auto back = ParseDeviceRule(DeviceRuleText(r));
    REQUIRE(back.ok());
    CHECK(*back == r);
  }
  CHECK(DeviceRuleText({'c', 195, 0, "rwm"}) == "c 195:0 rwm");
  CHECK(DeviceRuleText({'c', -1, -1, "m"}) == "c *:* m");
  auto bad = ParseDeviceRule("x 1:2 rw");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("x 1:2 rw") != std::string::npos);
  CHECK_FALSE(ParseDeviceRule("c 1 rw").ok());
  CHECK_FALSE(ParseDeviceRule("c 1:2 rwx").ok());
}

TEST_CASE("BPF device program: prologue, one block per rule, default deny") {
  auto p = BuildDeviceProgram({{'c', 1, 3, "rwm"}, {'c', 195, -1, "rw"}});
  REQUIRE(p.size() > 8);
  CHECK(p.back().code == (BPF_JMP | BPF_EXIT));
  CHECK(p[p.size() - 2].imm == 0);  // r0 = 0: deny when nothing matched
  // Every jump lands inside the program.
  for (size_t i = 0; i < p.size(); ++i)
    if (BPF_CLASS(p[i].code) == BPF_JMP && BPF_OP(p[i].code) != BPF_EXIT)
      CHECK(i + 1 + p[i].off < p.size());
  int allows = 0;
  for (const auto& in : p) allows += in.code == (BPF_ALU64 | BPF_MOV | BPF_K) && in.imm == 1;
  CHECK(allows == 2);
}

TEST_CASE("core map: disjoint cores while possible, restore, release") {
  CoreMap m({0, 1, 2, 3});
  CHECK(m.Assign(1, 2) == std::vector<uint32_t>{0, 1});
  CHECK(m.Assign(2, 1) == std::vector<uint32_t>{2});
  CHECK(m.Assign(1, 2) == std::vector<uint32_t>{0, 1});  // idempotent
  CHECK(m.Free() == std::vector<uint32_t>{3});
  CHECK(m.Assign(3, 2).size() == 2);                      // overcommitted: least used first
  m.Release(1);
  m.Release(3);
  CHECK(m.Free() == std::vector<uint32_t>{0, 1, 3});
  m.Restore(4, {3, 9});                                    // 9 is not on this node
  CHECK(m.Free() == std::vector<uint32_t>{0, 1});
  CHECK(m.Assign(5, 99).size() == 4);                      // clamped
  CHECK(FormatCpuList({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
  CHECK(*ParseCpuList("0-2,5\n") == std::vector<uint32_t>{0, 1, 2, 5});
  CHECK_FALSE(ParseCpuList("3-1").ok());
}

TEST_CASE("isolation plan: memory from the alloc, cores, GPU devices, HCAs; file round trip") {
  IsolationFacts f;
  f.node_name = "n1";
  f.cgroup_root = "/sys/fs/cgroup";
  f.cgroup_parent = CgroupParentFor("n1", "/var/spool/n1");
  f.pids_max = 100;
  GpuInfo g0, g1;
  g0.index = 0, g0.minor = 0, g0.numa_node = 0;
  g1.index = 1, g1.minor = 1, g1.numa_node = 1;
  g1.mig = {{"1g.10gb", 0, 1, "MIG-x", 1}};
  f.gpus = {g0, g1};
  f.gpu_shared_devices = {{'c', 195, 255, "rwm"}};
  f.rdma_devices = {{'c', 231, 192, "rwm"}};
  RdmaPort a{"mlx5_0", 1, "ACTIVE", "", "InfiniBand", 0, ""};
  RdmaPort b{"mlx5_1", 1, "ACTIVE", "", "InfiniBand", 1, ""};
  f.hcas = {a, b};
  tessera::v1::LaunchJob l;
  l.set_job_id(12);
  auto* al = l.add_alloc();
  al->set_node("n1");
  al->set_cpus(2);
  al->set_mem_mib(50);
  al->add_mig_uuids("MIG-x");
  IsolationPlanner planner(f, CoreMap({0, 1, 2, 3}));
  JobIsolation iso = planner.Plan(l);
  CHECK(iso.cgroup.name == f.cgroup_parent + "/job_12");
  CHECK(iso.cgroup.cpus == "0-1");
  CHECK(iso.cgroup.memory_bytes == 50ull << 20);
  CHECK(iso.cgroup.pids_max == 100);
  CHECK(iso.cgroup.restrict_devices);
  auto has = [&](DeviceRule r) {
    return std::find(iso.cgroup.devices.begin(), iso.cgroup.devices.end(), r) !=
           iso.cgroup.devices.end();
  };
  CHECK(has({'c', 195, 1, "rwm"}));     // the MIG slice's parent GPU
  CHECK_FALSE(has({'c', 195, 0, "rwm"}));
  CHECK(has({'c', 195, 255, "rwm"}));
  CHECK(has({'c', 231, 192, "rwm"}));
  CHECK(iso.hcas == std::vector<std::string>{"mlx5_1:1"});  // same NUMA node as GPU 1
  auto back = ParseJobIsolation(FormatJobIsolation(iso));
  REQUIRE(back.ok());
  CHECK(back->cgroup.cpus == "0-1");
  CHECK(back->cgroup.devices == iso.cgroup.devices);
  CHECK(back->hcas == iso.hcas);
  auto bad = ParseJobIsolation("cpus=0-1\nmemory_bytes=lots\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("line 2") != std::string::npos);
  // Restart: a new planner restored from the file does not hand out the same cores.
  IsolationPlanner again(f, CoreMap({0, 1, 2, 3}));
  again.Restore(12, *back);
  CHECK(again.cores().Free() == std::vector<uint32_t>{2, 3});
  // Without cgroups: no cgroup name, still HCAs.
  f.cgroup_root.clear();
  JobIsolation none = PlanJobIsolation(l, f, {0});
  CHECK(none.cgroup_root.empty());
  CHECK(none.hcas.size() == 1);
}

namespace {

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("RDMA discovery from a fake sysfs tree and GPU-NIC affinity") {
  char tmpl[] = "/tmp/tessera-sysfs-XXXXXX";
  fs::path root = mkdtemp(tmpl);
  // Two switches under one root port on NUMA 0, a third HCA on NUMA 1, one port down.
  fs::path sw0 = root / "devices/pci0000:00/0000:00:01.0/0000:01:00.0";
  fs::path sw1 = root / "devices/pci0000:00/0000:00:02.0/0000:02:00.0";
  fs::path sw2 = root / "devices/pci0000:80/0000:80:01.0/0000:81:00.0";
  struct Hca { std::string name; fs::path dev; int numa; std::string state; };
  std::vector<Hca> hcas = {{"mlx5_0", sw0 / "0000:03:00.0", 0, "4: ACTIVE"},
                           {"mlx5_1", sw1 / "0000:04:00.0", 0, "4: ACTIVE"},
                           {"mlx5_2", sw2 / "0000:85:00.0", 1, "4: ACTIVE"},
                           {"mlx5_3", sw2 / "0000:86:00.0", 1, "1: DOWN"}};
  for (const auto& h : hcas) {
    Write(h.dev / "numa_node", std::to_string(h.numa) + "\n");
    fs::path cls = root / "class/infiniband" / h.name;
    fs::create_directories(cls);
    fs::create_directory_symlink(h.dev, cls / "device");
    Write(cls / "ports/1/state", h.state + "\n");
    Write(cls / "ports/1/rate", "200 Gb/sec (4X HDR)\n");
    Write(cls / "ports/1/link_layer", "InfiniBand\n");
  }
  auto ports = DiscoverRdma(root.string());
  REQUIRE(ports.ok());
  REQUIRE(ports->size() == 4);
  CHECK((*ports)[0].device == "mlx5_0");
  CHECK((*ports)[0].state == "ACTIVE");
  CHECK((*ports)[0].rate == "200 Gb/sec (4X HDR)");
  CHECK((*ports)[2].numa_node == 1);
  CHECK((*ports)[3].state == "DOWN");
  CHECK((*ports)[1].pci_path == fs::canonical(hcas[1].dev).string());

  auto names = [](const std::vector<RdmaPort>& v) {
    std::vector<std::string> out;
    for (const auto& p : v) out.push_back(p.Name());
    return out;
  };
  // A GPU behind switch 1 gets mlx5_1 (same switch beats same NUMA node).
  GpuLocality gpu_sw1{0, fs::canonical(sw1).string() + "/0000:05:00.0"};
  CHECK(names(ChooseHcas({gpu_sw1}, *ports)) == std::vector<std::string>{"mlx5_1:1"});
  // A GPU on NUMA 1 without a path: mlx5_2 (mlx5_3 is down).
  CHECK(names(ChooseHcas({{1, ""}}, *ports)) == std::vector<std::string>{"mlx5_2:1"});
  // Two GPUs: one HCA each.
  CHECK(names(ChooseHcas({gpu_sw1, {1, ""}}, *ports)) ==
        std::vector<std::string>{"mlx5_1:1", "mlx5_2:1"});
  // No GPUs: every active port.
  CHECK(ChooseHcas({}, *ports).size() == 3);
  CHECK(DiscoverRdma((root / "nothing").string())->empty());
  fs::remove_all(root);
}

// A job's cpuset under a parent another stepd has just created but not filled yet (the first
// jobs of a node start concurrently): Create must fill the chain, not copy the empty parent.
TEST_CASE("cgroup v1: a job cpuset under a parent with empty cpus/mems still gets both") {
  CgroupMounts m = DetectCgroupsOnHost("/sys/fs/cgroup");
  if (::geteuid() != 0 || m.mode != CgroupMode::kV1 || !m.v1.count("cpuset")) {
    WARN("SKIPPED: needs root and a cgroup v1 cpuset hierarchy");
    return;
  }
  auto read = [](const std::string& p) {
    std::ifstream in(p);
    std::string s;
    std::getline(in, s);
    return s;
  };
  std::string top = "tessera-unit-" + std::to_string(::getpid());
  std::string root = m.v1.at("cpuset");
  REQUIRE(std::filesystem::create_directories(root + "/" + top + "/parent"));
  CHECK(read(root + "/" + top + "/parent/cpuset.mems").empty());
  auto cg = MakeCgroupManager(m);
  REQUIRE(cg);
  CgroupSpec spec;
  spec.name = top + "/parent/job_1";
  spec.cpus = "0";
  Status st = cg->Create(spec);
  CHECK(st.ok());
  CHECK(read(root + "/" + spec.name + "/cpuset.cpus") == "0");
  CHECK(!read(root + "/" + spec.name + "/cpuset.mems").empty());
  CHECK(!read(root + "/" + top + "/parent/cpuset.cpus").empty());
  CHECK(read(root + "/" + spec.name + "/cpuset.sched_load_balance") == "0");
  // A second job: the fast path (parents complete).
  CgroupSpec second = spec;
  second.name = top + "/parent/job_2";
  second.cpus = "";
  CHECK(cg->Create(second).ok());
  CHECK(read(root + "/" + second.name + "/cpuset.cpus") ==
        read(root + "/" + top + "/parent/cpuset.cpus"));
  CHECK(cg->Remove(spec.name).ok());
  CHECK(cg->Remove(second.name).ok());
  for (const char* c : {"cpuset", "memory", "devices", "pids", "freezer"}) {
    if (!m.v1.count(c)) continue;
    ::rmdir((m.v1.at(c) + "/" + top + "/parent").c_str());
    ::rmdir((m.v1.at(c) + "/" + top).c_str());
  }
}

// Issue 20 §2: a released v1 job cgroup is pooled and reused by the next job, which gets its
// own limits (unset ones reset); nothing named for a job is left once its cgroups are torn down,
// and RemoveCgroupPool leaves the parent empty in every hierarchy.
TEST_CASE("cgroup v1 pool: a reused cgroup gets the new job's limits; nothing is left") {
  CgroupMounts m = DetectCgroupsOnHost("/sys/fs/cgroup");
  if (::geteuid() != 0 || m.mode != CgroupMode::kV1 || !m.v1.count("memory") ||
      !m.v1.count("pids") || !m.v1.count("devices") || !m.v1.count("cpuset")) {
    WARN("SKIPPED: needs root and cgroup v1 cpuset, memory, pids and devices hierarchies");
    return;
  }
  auto read = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  auto exists = [](const std::string& p) { return ::access(p.c_str(), F_OK) == 0; };
  std::string parent = "tessera-unit-pool-" + std::to_string(::getpid());
  JobIsolation iso;
  iso.cgroup_root = "/sys/fs/cgroup";
  CgroupSpec limited;
  limited.cpus = "0";
  limited.memory_bytes = 64ull << 20;
  limited.pids_max = 100;
  limited.restrict_devices = true;
  limited.devices = StandardDeviceRules();
  CgroupSpec open;  // no limit set: a reused cgroup must lose the previous job's
  std::string slot = CgroupPoolSlot(parent + "/job_1", 0);
  auto dir = [&](const char* c, const std::string& name) { return m.v1.at(c) + "/" + name; };

  iso.cgroup = limited;
  iso.cgroup.name = parent + "/job_1";
  std::vector<std::string> warnings;
  {
    BatchCgroups job1;
    REQUIRE(job1.Setup(iso, &warnings).ok());
    CHECK(job1.acct() == parent + "/job_1/batch");
    // The accounting child stands in for the job's cgroup in memory (and cpuacct).
    auto files = job1.JoinFiles();
    CHECK(std::count(files.begin(), files.end(), dir("memory", parent + "/job_1/batch") + "/cgroup.procs") == 1);
    CHECK(std::count(files.begin(), files.end(), dir("memory", parent + "/job_1") + "/cgroup.procs") == 0);
    CHECK(std::count(files.begin(), files.end(), dir("pids", parent + "/job_1") + "/cgroup.procs") == 1);
    REQUIRE(job1.Teardown().ok());
  }
  for (const auto& [c, mount] : m.v1) {
    CHECK_FALSE(exists(mount + "/" + parent + "/job_1"));
    CHECK(exists(mount + "/" + slot));
  }
  // Session 8: the batch script's accounting child stays in the pooled cgroup.
  CHECK(exists(dir("memory", slot) + "/batch"));
  CHECK(exists(dir("cpuacct", slot) + "/batch"));

  iso.cgroup = open;
  iso.cgroup.name = parent + "/job_2";
  {
    BatchCgroups job2;
    REQUIRE(job2.Setup(iso, &warnings).ok());
    CHECK_FALSE(exists(dir("memory", slot)));  // the pooled one was taken
    std::string name = iso.cgroup.name;
    CHECK(read(dir("cpuset", name) + "/cpuset.cpus") == read(dir("cpuset", parent) + "/cpuset.cpus"));
    CHECK(std::stoull(read(dir("memory", name) + "/memory.limit_in_bytes")) > (1ull << 40));
    CHECK(read(dir("pids", name) + "/pids.max") == "max\n");
    CHECK(read(dir("devices", name) + "/devices.list") == "a *:* rwm\n");
    CHECK(exists(dir("memory", name) + "/batch"));  // the kept accounting child
    REQUIRE(job2.Teardown().ok());
  }

  iso.cgroup = limited;
  iso.cgroup.name = parent + "/job_3";
  {
    BatchCgroups job3;
    REQUIRE(job3.Setup(iso, &warnings).ok());
    std::string name = iso.cgroup.name;
    CHECK(read(dir("cpuset", name) + "/cpuset.cpus") == "0\n");
    CHECK(read(dir("memory", name) + "/memory.limit_in_bytes") == std::to_string(64ull << 20) + "\n");
    CHECK(read(dir("pids", name) + "/pids.max") == "100\n");
    std::string devices = read(dir("devices", name) + "/devices.list");
    CHECK(devices.find("a *:* rwm") == std::string::npos);
    CHECK(devices.find("c 1:3 rwm") != std::string::npos);
    // A job's process joins the reused cgroup and is listed there; Teardown kills it.
    pid_t child = ::fork();
    if (child == 0) {
      ::pause();
      ::_exit(0);
    }
    REQUIRE(child > 0);
    REQUIRE(job3.manager()->AddPid(name, child).ok());
    auto procs = job3.manager()->Procs(name);
    REQUIRE(procs.ok());
    CHECK(std::count(procs->begin(), procs->end(), child) == 1);
    std::thread reaper([child] { ::waitpid(child, nullptr, 0); });  // KillAll waits for its exit
    Status down = job3.Teardown();
    reaper.join();
    REQUIRE(down.ok());
  }
  RemoveCgroupPool(m, parent);
  for (const auto& [c, mount] : m.v1) {
    CHECK_FALSE(exists(mount + "/" + slot));
    CHECK(::rmdir((mount + "/" + parent).c_str()) == 0);  // empty: nothing leaked
  }
}

// Session 8 (issue 20 §2): the pooled cgroup keeps the batch script's accounting child; the next
// job's usage and OOM state are its own (baselines), and an empty cgroup is known empty from
// pids.current. Job 1 burns CPU, allocates 32 MiB and is OOM-killed in a 48 MiB limit; job 2,
// in the same (reused) cgroups, reports neither the CPU, nor the memory peak, nor the OOM kill.
TEST_CASE("cgroup v1 pool: the kept accounting child reports the next job's usage only") {
  CgroupMounts m = DetectCgroupsOnHost("/sys/fs/cgroup");
  if (::geteuid() != 0 || m.mode != CgroupMode::kV1 || !m.v1.count("memory") ||
      !m.v1.count("pids") || !m.v1.count("cpuacct")) {
    WARN("SKIPPED: needs root and cgroup v1 memory, pids and cpuacct hierarchies");
    return;
  }
  auto exists = [](const std::string& p) { return ::access(p.c_str(), F_OK) == 0; };
  std::string parent = "tessera-unit-acct-" + std::to_string(::getpid());
  JobIsolation iso;
  iso.cgroup_root = "/sys/fs/cgroup";
  iso.cgroup.memory_bytes = 48ull << 20;
  // Runs `work` in a child that joins the job's cgroups (as stepd's child does), waits for it.
  auto run = [](BatchCgroups& job, int (*work)()) {
    std::vector<std::string> files = job.JoinFiles();
    pid_t pid = ::fork();
    if (pid == 0) {
      for (const auto& f : files) {
        std::ofstream out(f);
        out << 0;
        out.flush();
        if (!out) ::_exit(120);
      }
      ::_exit(work());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  };
  auto burn = []() -> int {
    // ~0.3 s of CPU, 32 MiB touched, then 64 MiB more: the 48 MiB limit OOM-kills it.
    volatile uint64_t x = 0;
    for (uint64_t i = 0; i < 300000000ull; ++i) x = x + i;
    std::vector<char> a(32u << 20, 1);
    std::vector<char> b(64u << 20, 1);
    return static_cast<int>(a[7] + b[9] + (x & 1));
  };
  auto idle = []() -> int { return 0; };
  std::string slot = CgroupPoolSlot(parent + "/job_1", 0);
  std::vector<std::string> warnings;
  {
    iso.cgroup.name = parent + "/job_1";
    BatchCgroups job1;
    REQUIRE(job1.Setup(iso, &warnings).ok());
    int status = run(job1, burn);
    CHECK(WIFSIGNALED(status));
    TaskUsage u;
    job1.usage()->Read(job1.acct(), &u);
    CHECK(u.user_ms + u.system_ms >= 100);
    CHECK(u.max_rss_kib >= 32u * 1024);
    auto oom = job1.manager()->OomKilled(iso.cgroup.name);
    CHECK((oom.ok() && *oom));
    // Emptiness from the counter: the child is reaped, so pids.current is 0.
    std::ifstream pc(m.v1.at("pids") + "/" + iso.cgroup.name + "/pids.current");
    int current = -1;
    pc >> current;
    CHECK(current == 0);
    REQUIRE(job1.Teardown().ok());
  }
  REQUIRE(exists(m.v1.at("memory") + "/" + slot + "/batch"));
  {
    iso.cgroup.name = parent + "/job_2";
    BatchCgroups job2;
    REQUIRE(job2.Setup(iso, &warnings).ok());
    CHECK_FALSE(exists(m.v1.at("memory") + "/" + slot));  // the pooled one, with its child
    CHECK(job2.acct() == iso.cgroup.name + "/batch");
    TaskUsage before;
    job2.usage()->Read(job2.acct(), &before);
    CHECK(before.user_ms + before.system_ms == 0);
    CHECK(before.max_rss_kib < 1024);
    CHECK(before.major_faults == 0);
    CHECK(run(job2, idle) == 0);
    TaskUsage u;
    job2.usage()->Read(job2.acct(), &u);
    CHECK(u.user_ms + u.system_ms < 100);
    CHECK(u.max_rss_kib < 16u * 1024);
    auto oom = job2.manager()->OomKilled(iso.cgroup.name);
    CHECK((oom.ok() && !*oom));
    REQUIRE(job2.Teardown().ok());
  }
  RemoveCgroupPool(m, parent);
  for (const auto& [c, mount] : m.v1) {
    CHECK_FALSE(exists(mount + "/" + slot));
    CHECK(::rmdir((mount + "/" + parent).c_str()) == 0);  // empty: nothing leaked
  }
}

// Session 8: jobs ending together all find a slot (the pool's flock): 8 job cgroups released
// at once from 8 threads leave 8 complete slots (each in every hierarchy), and the next 8 jobs
// take them all back (no new directory made: the slots are gone afterwards).
TEST_CASE("cgroup v1 pool: concurrent releases keep every cgroup") {
  CgroupMounts m = DetectCgroupsOnHost("/sys/fs/cgroup");
  if (::geteuid() != 0 || m.mode != CgroupMode::kV1 || !m.v1.count("memory") ||
      !m.v1.count("pids")) {
    WARN("SKIPPED: needs root and cgroup v1 memory and pids hierarchies");
    return;
  }
  auto exists = [](const std::string& p) { return ::access(p.c_str(), F_OK) == 0; };
  std::string parent = "tessera-unit-race-" + std::to_string(::getpid());
  constexpr int kJobs = 8;
  for (int round = 0; round < 6; ++round) {  // a race is not lost every time: several rounds
    std::vector<std::unique_ptr<BatchCgroups>> jobs;
    std::vector<std::string> warnings;
    for (int j = 0; j < kJobs; ++j) {
      JobIsolation iso;
      iso.cgroup_root = "/sys/fs/cgroup";
      iso.cgroup.name = parent + "/job_" + std::to_string(round * kJobs + j);
      jobs.push_back(std::make_unique<BatchCgroups>());
      REQUIRE(jobs.back()->Setup(iso, &warnings).ok());
    }
    if (round > 0)  // every slot was taken back
      for (int k = 0; k < kJobs; ++k)
        CHECK_FALSE(exists(m.v1.at("pids") + "/" + CgroupPoolSlot(parent + "/x", k)));
    std::vector<std::thread> threads;
    std::vector<int> ok(kJobs, 0);
    for (int j = 0; j < kJobs; ++j)
      threads.emplace_back([&, j] { ok[j] = jobs[j]->Teardown().ok(); });
    for (auto& t : threads) t.join();
    CHECK(std::count(ok.begin(), ok.end(), 1) == kJobs);
    for (int k = 0; k < kJobs; ++k)
      for (const auto& [c, mount] : m.v1) {
        INFO(c << " slot " << k << " round " << round);
        CHECK(exists(mount + "/" + CgroupPoolSlot(parent + "/x", k)));
      }
  }
  RemoveCgroupPool(m, parent);
  for (const auto& [c, mount] : m.v1) CHECK(::rmdir((mount + "/" + parent).c_str()) == 0);
}
