// tessera-noded -N <nodename> [-f <tessera.conf>]
// The node daemon: discovers the node, serves the health port, keeps the stream to ctld and
// starts one tessera-stepd per job. Runs in the foreground; logs to stderr. SIGTERM/SIGINT stop
// it without touching running jobs (they belong to their detached stepds).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/cluster_config.h"
#include "noded/agent_client.h"
#include "noded/gpu_backend.h"
#include "noded/job_manager.h"
#include "noded/log.h"
#include "noded/node_resources.h"
#include "noded/node_server.h"
#include "noded/notify_socket.h"
#include "noded/spool.h"
#include "noded/stepd_control.h"
#include "rpc/munge_codec.h"

namespace tessera::noded {
namespace {

constexpr char kUsage[] =
    "usage: tessera-noded -N <nodename> [-f <tessera.conf>]\n"
    "  -N, --node NAME   this node's NodeName in tessera.conf (required)\n"
    "  -f, --conf PATH   config file (default $TESSERA_CONF or /etc/tessera/tessera.conf)\n";

void Log(const std::string& m) { LogLine("tessera-noded", m); }

int Fatal(const std::string& m) {
  Log("fatal: " + m);
  return 1;
}

struct Flags {
  std::string node;
  std::string conf = DefaultConfigPath();
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
    } else if (a == "-N" || a == "--node") {
      const char* v = value("-N");
      if (!v) return std::fputs("tessera-noded: -N needs a node name\n", stderr), 2;
      f->node = v;
    } else if (a == "-f" || a == "--conf") {
      const char* v = value("-f");
      if (!v) return std::fputs("tessera-noded: -f needs a path\n", stderr), 2;
      f->conf = v;
    } else {
      std::fprintf(stderr, "tessera-noded: unknown argument '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (f->node.empty()) return std::fprintf(stderr, "tessera-noded: -N is required\n%s", kUsage), 2;
  return -1;
}

Result<NodeDescription> Describe(const ClusterConfig& cfg, const std::string& node) {
  NodeDescription d;
  d.name = node;
  d.cpus = DiscoverCpus();
  auto mem = DiscoverMemoryMib();
  if (!mem.ok()) return mem.status();
  d.memory_mib = *mem;
  auto boot = DiscoverBootTime();
  d.boot_time = boot.ok() ? *boot : 0;
  auto it = cfg.gpus.find(node);
  SimulatedGpuBackend gpus(cfg.cluster_name, node,
                           it == cfg.gpus.end() ? std::vector<GpuDecl>{} : it->second);
  auto devs = gpus.Discover();
  if (!devs.ok()) return devs.status();
  d.gpus = *devs;
  return d;
}

int Main(int argc, char** argv) {
  Flags flags;
  if (int rc = ParseFlags(argc, argv, &flags); rc >= 0) return rc;
  auto cfg = LoadClusterConfig(flags.conf);
  if (!cfg.ok()) return Fatal("cannot load config: " + cfg.status().message());
  for (const auto& w : cfg->warnings) Log("config warning: " + w);
  const NodeConfig* nc = cfg->FindNode(flags.node);
  if (!nc)
    return Fatal("node '" + flags.node + "' is not defined in " + flags.conf +
                 " (no NodeName= line names it)");
  auto desc = Describe(*cfg, flags.node);
  if (!desc.ok()) return Fatal(desc.status().message());
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

  Spool spool(cfg->SpoolDirFor(flags.node));
  if (Status st = spool.Init(); !st.ok()) return Fatal(st.message());
  int port = 0;
  auto server = StartNodeServer(*cfg, nc->port, &port);
  if (!server.ok()) return Fatal(server.status().message());
  Log("listening on port " + std::to_string(port) + " (gRPC health)");
  auto notify_fd = BindNotifySocket(spool.NotifySocket());
  if (!notify_fd.ok()) return Fatal(notify_fd.status().message());

  StepdArgs sargs{StepdPathNextToSelf(), flags.node, cfg->cluster_name, spool.NotifySocket(), {}};
  for (const auto& g : desc->gpus) sargs.gpu_uuids.push_back(g.uuid);
  OsStepdControl control(sargs);
  ProcStepdProbe probe;
  SystemClock clock;
  JobManager jobs(spool, control, probe, clock, Log);
  if (Status st = jobs.Recover(); !st.ok()) return Fatal(st.message());
  Log("spool " + spool.root() + ": " + std::to_string(jobs.Running().size()) + " running, " +
      std::to_string(jobs.Unacked().size()) + " finished unacknowledged");

  rpc::MungeCodec codec(cfg->munge_socket);
  AgentClient agent(*cfg, *desc, jobs, codec, clock);
  std::atomic<bool> stop{false};
  std::thread notifier([&] {
    while (!stop) {
      if (ReceiveNotify(*notify_fd, 500) != 0) agent.Wake();
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
  server->server->Shutdown();
  close(*notify_fd);
  Log("stopped");
  return 0;
}

}  // namespace
}  // namespace tessera::noded

int main(int argc, char** argv) { return tessera::noded::Main(argc, argv); }
