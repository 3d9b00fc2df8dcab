// tessera-noded -N <nodename> [-f <tessera.conf>]
// The node daemon: discovers the node, serves the health port, keeps the stream to ctld and
// starts one tessera-stepd per job. Runs in the foreground; logs to stderr. SIGTERM/SIGINT stop
// it without touching running jobs (they belong to their detached stepds).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/cluster_config.h"
#include "common/config_check.h"
#include "common/metrics/metrics_server.h"
#include "common/metrics_config.h"
#include "noded/agent_client.h"
#include "noded/gpu_backend.h"
#include "noded/gpu_manager.h"
#include "noded/gpu_types.h"
#include "noded/job_isolation.h"
#include "noded/mig_caps.h"
#include "noded/nvml_backend.h"
#include "noded/rdma.h"
#include "noded/job_manager.h"
#include "noded/log.h"
#include "noded/node_resources.h"
#include "noded/node_server.h"
#include "noded/noded_metrics.h"
#include "noded/notify_socket.h"
#include "noded/spool.h"
#include "noded/step_grants.h"
#include "noded/step_service.h"
#include "noded/stepd_control.h"
#include "rpc/munge_codec.h"

namespace tessera::noded {
namespace {

constexpr char kUsage[] =
    "usage: tessera-noded -N <nodename> [-f <tessera.conf>]\n"
    "       tessera-noded --check-config [-N <nodename>] [-f <tessera.conf>]\n"
    "The Tessera node daemon: runs the controller's jobs on this node (through tessera-stepd).\n"
    "  -N, --node NAME   this node's NodeName in tessera.conf (required to run)\n"
    "  -f, --conf PATH   config file (default $TESSERA_CONF or /etc/tessera/tessera.conf)\n"
    "  --check-config    check what noded reads (tessera.conf, gres.conf) for NAME, or for every\n"
    "                    node without -N, and exit: non-zero on anything noded would refuse\n"
    "  -h, --help        show this help\n"
    "  -V, --version     show the version\n";

void Log(const std::string& m) { LogLine("tessera-noded", m); }

int Fatal(const std::string& m) {
  Log("fatal: " + m);
  return 1;
}

struct Flags {
  std::string node;
  std::string conf = DefaultConfigPath();
  bool check_only = false;  // --check-config (issue 21 §2)
};

// Returns -1 to continue, else an exit code.
int ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)name;
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-V" || a == "--version") {
      std::fputs("tessera-noded " TESSERA_VERSION "\n", stdout);
      return 0;
    } else if (a == "-N" || a == "--node") {
      const char* v = value("-N");
      if (!v) return std::fputs("tessera-noded: -N needs a node name\n", stderr), 2;
      f->node = v;
    } else if (a == "--check-config") {
      f->check_only = true;
    } else if (a == "-f" || a == "--conf") {
      const char* v = value("-f");
      if (!v) return std::fputs("tessera-noded: -f needs a path\n", stderr), 2;
      f->conf = v;
    } else {
      std::fprintf(stderr, "tessera-noded: unknown argument '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (f->node.empty() && !f->check_only) return std::fprintf(stderr, "tessera-noded: -N is required\n%s", kUsage), 2;
  return -1;
}

// Node-side settings read from the raw config lines (common/cluster_config does not type them):
//   tessera.conf: CgroupMountpoint= (default /sys/fs/cgroup; "none" = no cgroups),
//                 CgroupPidsMax= (default 16384, 0 = none), GpuIgnoredXids=13,31,...,
//                 RdmaSysfsRoot= (default /sys), NvidiaProcRoot= (default /proc: where
//                 driver/nvidia/capabilities and devices are read for MIG nvidia-caps)
//   gres.conf:    MigEnabled= MigLayout= Mps= Replicas= NumaNode= (SimGpuOptions), AutoDetect=nvml
struct NodeSettings {
  std::string cgroup_root = "/sys/fs/cgroup";
  uint64_t pids_max = 16384;
  std::set<uint32_t> ignored_xids;
  std::string rdma_sysfs = "/sys";
  std::string nvidia_proc = "/proc";
  std::vector<SimGpuOptions> sim_gpus;
  bool nvml = false;
};

Result<NodeSettings> ReadNodeSettings(const ClusterConfig& cfg, const std::string& node) {
  NodeSettings s;
  auto lines = ParseConfigFile(cfg.path);
  if (!lines.ok()) return lines.status();
  for (const auto& l : *lines) {
    for (const auto& p : l.pairs) {
      if (p.key == "cgroupmountpoint") {
        s.cgroup_root = p.value == "none" ? "" : p.value;
      } else if (p.key == "cgrouppidsmax") {
        if (p.value.empty() || p.value.find_first_not_of("0123456789") != std::string::npos ||
            p.value.size() > 9)
          return InvalidArgument(l.Where() + ": CgroupPidsMax=" + p.value + ": expected a number");
        s.pids_max = std::stoull(p.value);
      } else if (p.key == "gpuignoredxids") {
        auto x = ParseXidList(p.value);
        if (!x.ok()) return InvalidArgument(l.Where() + ": " + x.status().message());
        s.ignored_xids = *x;
      } else if (p.key == "rdmasysfsroot") {
        s.rdma_sysfs = p.value;
      } else if (p.key == "nvidiaprocroot") {
        s.nvidia_proc = p.value;
      }
    }
  }
  // Spelled as the other gres.conf readers spell it (common/config_check.cc), so a problem both
  // find is reported once by --check-config.
  std::string gres_path = cfg.path.substr(0, cfg.path.rfind('/') + 1) + "gres.conf";
  if (::access(gres_path.c_str(), F_OK) == 0) {
    auto gres = ParseConfigFile(gres_path);
    if (!gres.ok()) return gres.status();
    auto opts = ParseSimGpuOptions(*gres, node);
    if (!opts.ok()) return opts.status();
    s.sim_gpus = *opts;
    for (const auto& l : *gres)
      if (const std::string* a = l.Find("autodetect"); a && ToLower(*a) == "nvml") s.nvml = true;
  }
  auto it = cfg.gpus.find(node);
  if (it != cfg.gpus.end())
    for (const auto& d : it->second) s.nvml = s.nvml || !d.simulated;
  return s;
}

std::unique_ptr<GpuBackend> MakeGpuBackend(const ClusterConfig& cfg, const std::string& node,
                                           const NodeSettings& s, const std::string& spool) {
  auto it = cfg.gpus.find(node);
  std::vector<GpuDecl> decls = it == cfg.gpus.end() ? std::vector<GpuDecl>{} : it->second;
  bool simulated = false;
  for (const auto& d : decls) simulated = simulated || d.simulated;
  if (s.nvml && !simulated) {
    auto nvml = NvmlGpuBackend::Open();
    if (nvml.ok()) return std::move(*nvml);
    Log("NVML unavailable (" + nvml.status().message() + "); no real GPUs on this node");
  }
  return std::make_unique<SimulatedGpuBackend>(cfg.cluster_name, node, decls, s.sim_gpus, spool);
}

Result<NodeDescription> Describe(const std::string& node, GpuBackend& gpus,
                                 const NodeSettings& s, const std::vector<GpuDecl>& decls) {
  NodeDescription d;
  d.name = node;
  d.cpus = DiscoverCpus();
  auto mem = DiscoverMemoryMib();
  if (!mem.ok()) return mem.status();
  d.memory_mib = *mem;
  auto boot = DiscoverBootTime();
  d.boot_time = boot.ok() ? *boot : 0;
  d.boot_id = DiscoverBootId();
  auto devs = gpus.Discover();
  if (!devs.ok()) return devs.status();
  d.gpus = *devs;
  for (const auto& note : gpus.TakeNotes()) Log(note);
  for (const auto& note : ApplyConfiguredTypes(d.gpus, decls)) Log(note);
  auto hcas = DiscoverRdma(s.rdma_sysfs);
  if (hcas.ok()) d.hcas = *hcas;
  return d;
}

// Cgroups need root and a mounted hierarchy; otherwise jobs run without isolation.
IsolationFacts MakeIsolationFacts(const std::string& node, const NodeSettings& s,
                                  const NodeDescription& d, const std::string& spool) {
  IsolationFacts f;
  f.node_name = node;
  f.cgroup_parent = CgroupParentFor(node, spool);
  f.pids_max = s.pids_max;
  f.gpus = d.gpus;
  f.hcas = d.hcas;
  if (!s.cgroup_root.empty() && ::geteuid() == 0) {
    CgroupMounts m = DetectCgroupsOnHost(s.cgroup_root);
    if (m.mode != CgroupMode::kNone) f.cgroup_root = s.cgroup_root;
    Log(std::string("cgroups: ") + CgroupModeName(m.mode) + " under " + s.cgroup_root +
        (m.mode == CgroupMode::kNone ? " (jobs run without isolation)" : ""));
    if (m.mode != CgroupMode::kNone && !m.favordynmods)
      Log("cgroups: note: no cgroup mount has favordynmods, so every job start waits for a "
          "kernel RCU grace period in its cgroup.procs writes (several ms); boot with "
          "cgroup_favordynmods=true or remount cgroup2 with favordynmods (admin guide, cgroups)");
  } else {
    Log("cgroups: off (" + std::string(::geteuid() != 0 ? "not root" : "CgroupMountpoint=none") +
        "); jobs run without isolation");
  }
  for (const char* dev : {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"})
    for (const auto& r : CharDeviceRules("/dev", dev)) f.gpu_shared_devices.push_back(r);
  std::vector<std::string> cap_errors;
  f.nvidia_proc = s.nvidia_proc;
  f.mig_devices = MigDeviceRules(d.gpus, s.nvidia_proc, &cap_errors);
  for (const auto& e : cap_errors) Log("warning: " + e);
  f.rdma_devices = CharDeviceRules("/dev/infiniband");
  f.rdma_devices_by_name = CharDeviceRulesByName("/dev/infiniband");
  return f;
}

// --check-config: the config as noded would load it, for one node or all; problems on stderr
// ("file:line: ..."), exit 1 on any.
int CheckConfig(const Flags& flags) {
  auto cfg = LoadClusterConfig(flags.conf);
  if (!cfg.ok()) {
    std::fprintf(stderr, "tessera-noded: error: %s\n", cfg.status().message().c_str());
    return 1;
  }
  for (const auto& w : cfg->warnings) std::fprintf(stderr, "tessera-noded: warning: %s\n", w.c_str());
  std::vector<std::string> problems;
  std::vector<std::string> nodes;
  if (!flags.node.empty()) {
    if (!cfg->FindNode(flags.node))
      problems.push_back(flags.conf + ": node '" + flags.node + "' is not defined (no NodeName= line names it)");
    else
      nodes.push_back(flags.node);
  } else {
    for (const auto& n : cfg->nodes) nodes.push_back(n.name);
  }
  std::set<std::string> seen;
  for (const auto& n : nodes) {
    auto s = ReadNodeSettings(*cfg, n);
    if (!s.ok() && seen.insert(s.status().message()).second) problems.push_back(s.status().message());
  }
  for (auto& p : CheckGresMig(*cfg))
    if (seen.insert(p).second) problems.push_back(std::move(p));
  for (const auto& p : problems) std::fprintf(stderr, "tessera-noded: error: %s\n", p.c_str());
  if (!problems.empty()) {
    std::fprintf(stderr, "tessera-noded: %s: configuration NOT OK\n", flags.conf.c_str());
    return 1;
  }
  std::printf("%s: configuration OK for %s\n", flags.conf.c_str(),
              flags.node.empty() ? (std::to_string(nodes.size()) + " nodes").c_str() : flags.node.c_str());
  return 0;
}

int Main(int argc, char** argv) {
  Flags flags;
  if (int rc = ParseFlags(argc, argv, &flags); rc >= 0) return rc;
  if (flags.check_only) return CheckConfig(flags);
  auto cfg = LoadClusterConfig(flags.conf);
  if (!cfg.ok()) return Fatal("cannot load config: " + cfg.status().message());
  for (const auto& w : cfg->warnings) Log("config warning: " + w);
  const NodeConfig* nc = cfg->FindNode(flags.node);
  if (!nc)
    return Fatal("node '" + flags.node + "' is not defined in " + flags.conf +
                 " (no NodeName= line names it)");
  auto settings = ReadNodeSettings(*cfg, flags.node);
  if (!settings.ok()) return Fatal(settings.status().message());
  Spool spool(cfg->SpoolDirFor(flags.node));
  if (Status st = spool.Init(); !st.ok()) return Fatal(st.message());
  auto gpu_backend = MakeGpuBackend(*cfg, flags.node, *settings, spool.root());
  auto decl_it = cfg->gpus.find(flags.node);
  auto desc = Describe(flags.node, *gpu_backend, *settings,
                       decl_it == cfg->gpus.end() ? std::vector<GpuDecl>{} : decl_it->second);
  if (!desc.ok()) return Fatal(desc.status().message());
  Log(std::to_string(desc->hcas.size()) + " RDMA ports under " + settings->rdma_sysfs);
  Log("node " + flags.node + ": " + std::to_string(desc->cpus) + " cpus, " +
      std::to_string(desc->memory_mib) + " MiB, " + std::to_string(desc->gpus.size()) + " gpus");
  if (desc->cpus < nc->cpus || desc->memory_mib < nc->real_memory_mib)
    Log("warning: the machine has less than configured (CPUs=" + std::to_string(nc->cpus) +
        " RealMemory=" + std::to_string(nc->real_memory_mib) + ")");

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);

  rpc::MungeCodec codec(cfg->munge_socket);
  StepGrants grants;
  IsolationPlanner planner(MakeIsolationFacts(flags.node, *settings, *desc, spool.root()),
                           CoreMap(AllowedCores()));
  // Issue 20 §2: released job cgroups pooled by stepds (cgroup.h) are this node's to remove.
  auto remove_cgroup_pool = [&] {
    if (!planner.facts().cgroup_root.empty())
      RemoveCgroupPool(DetectCgroupsOnHost(planner.facts().cgroup_root),
                       planner.facts().cgroup_parent);
  };
  remove_cgroup_pool();
  StepServiceOptions step_opts{flags.node, spool.root(), cfg->kill_wait_s};
  for (const auto& g : desc->gpus) step_opts.gpu_uuids.push_back(g.uuid);
  for (const auto& g : desc->gpus) step_opts.gpu_memory_mib.push_back(g.memory_mib);
  step_opts.planner = &planner;
  MpsServers mps(flags.node, spool.root() + "/mps", desc->gpus,
                 std::make_unique<NvidiaMpsControl>(),
                 std::make_unique<SimulatedMpsControl>(spool.root() + "/mps-control.log"), Log);
  step_opts.mps = &mps;  // mps steps on every node of a job, not only the batch node
  StepService steps(step_opts, grants, codec, Log);
  int port = 0;
  auto server = StartNodeServer(*cfg, nc->port, &port, &steps);
  if (!server.ok()) return Fatal(server.status().message());
  Log("listening on port " + std::to_string(port) + " (gRPC health, StepAgent)");
  auto notify_fd = BindNotifySocket(spool.NotifySocket());
  if (!notify_fd.ok()) return Fatal(notify_fd.status().message());

  StepdArgs sargs{StepdPathNextToSelf(), flags.node, cfg->cluster_name, spool.NotifySocket(), {}};
  for (const auto& g : desc->gpus) sargs.gpu_uuids.push_back(g.uuid);
  ZygoteStepdControl control(sargs);
  if (Status z = control.Prestart(); !z.ok()) Log(z.message() + " (stepd is exec'd per job)");
  ProcStepdProbe probe;
  SystemClock clock;
  JobManager jobs(spool, control, probe, clock, Log, &planner);
  jobs.SetMpsServers(&mps);
  GpuManager gpu_manager(*gpu_backend, desc->gpus, settings->ignored_xids, Log);
  gpu_manager.SetLayoutListener([&planner](const GpuInfo& g) { planner.UpdateGpu(g); });
  if (Status st = jobs.Recover(); !st.ok()) return Fatal(st.message());
  mps.StopStale();  // daemons of steps from before a restart (their grants are gone)
  Log("spool " + spool.root() + ": " + std::to_string(jobs.Running().size()) + " running, " +
      std::to_string(jobs.Unacked().size()) + " finished unacknowledged");

  // Issue 20 §3: the node's Prometheus endpoint when its NodeName line sets MetricsPort=.
  std::unique_ptr<metrics::MetricsServer> metrics_server;
  auto conf_lines = ParseConfigFile(cfg->path);
  auto msettings = conf_lines.ok() ? ReadMetricsSettings(*conf_lines) : Result<MetricsSettings>(conf_lines.status());
  if (!msettings.ok()) return Fatal("cannot load config: " + msettings.status().message());
  if (auto it = msettings->node_ports.find(flags.node); it != msettings->node_ports.end()) {
    auto m = metrics::MetricsServer::Start(msettings->address, it->second,
                                           {NodedCollectable(jobs, control.counts())});
    if (!m.ok()) return Fatal(m.status().message());
    metrics_server = std::move(*m);
    Log("metrics on http://" + msettings->address + ":" + std::to_string(metrics_server->port()) + "/metrics");
  }
  AgentClient agent(*cfg, *desc, jobs, codec, clock, &gpu_manager, &steps);
  std::atomic<bool> stop{false};
  std::thread notifier([&] {
    while (!stop) {
      if (auto ids = ReceiveNotify(*notify_fd, 500); !ids.empty()) agent.WakeFor(ids);
    }
  });
  std::thread signals([&] {
    int sig = 0;
    sigwait(&sigs, &sig);
    Log(std::string("received ") + strsignal(sig) + ", stopping (jobs keep running)");
    stop = true;
    agent.Wake();
  });
  agent.Run(stop);
  if (!stop) kill(getpid(), SIGTERM);  // not reached: Run only returns on stop
  signals.join();
  notifier.join();
  // Running steps are cancelled after 2 s (their tasks get SIGTERM, KillWait, SIGKILL).
  server->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  close(*notify_fd);
  remove_cgroup_pool();  // a stepd still running pools its cgroup: removed at the next start
  Log("stopped");
  return 0;
}

}  // namespace
}  // namespace tessera::noded

int main(int argc, char** argv) { return tessera::noded::Main(argc, argv); }
