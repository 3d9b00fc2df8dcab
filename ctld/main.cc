// tessera-ctld: the central controller.
//   tessera-ctld [-f tessera.conf] [--check-config] [--init-state]
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <malloc.h>
#include <pwd.h>
#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <iostream>
#include <string>

#include "common/clock.h"
#include "common/cluster_config.h"
#include "common/metrics_config.h"
#include "common/wire_config.h"
#include "ctld/config_loader.h"
#include "ctld/controller.h"
#include "ctld/core.h"
#include "common/metrics/metrics_server.h"
#include "ctld/log.h"
#include "ctld/metrics/ctld_metrics.h"
#include "ctld/metrics/state_gauges.h"
#include "ctld/rpc/agent_service.h"
#include "ctld/rpc/authz.h"
#include "ctld/rpc/controller_service.h"
#include "ctld/rpc/local_server.h"
#include "ctld/state/state_file.h"
#include "ctld/state/store.h"
#include "rpc/absl_tuning.h"
#include "rpc/grpc_util.h"
#include "rpc/message_limits.h"
#include "rpc/munge_codec.h"

namespace tc = tessera::ctld;
using tessera::ClusterConfig;

namespace {

void Usage() {
  std::cout << "usage: tessera-ctld [-f CONFIG] [--check-config] [--init-state]\n"
               "The Tessera controller: keeps the jobs and nodes, schedules, and serves the API.\n"
               "  -f CONFIG        configuration file (default $TESSERA_CONF or /etc/tessera/tessera.conf)\n"
               "  --check-config   validate the configuration (and gres.conf, topology.conf) and exit:\n"
               "                   non-zero on anything ctld or noded would refuse, also later\n"
               "  --init-state     take an existing empty (0-byte or table-less) state database as a\n"
               "                   new cluster; without it only an absent file starts a new state\n"
               "  -D               run in the foreground (the only mode; accepted for slurmctld's -D)\n"
               "  -h, --help       show this help\n"
               "  -V, --version    print the version\n";
}

tessera::Result<tc::LoadedConfig> Load(const std::string& path) { return tc::LoadConfig(path); }

}  // namespace

int main(int argc, char** argv) {
  // One malloc arena per core instead of 8 per core: gRPC's many short-lived handler threads
  // otherwise leave most of the controller's RSS in per-thread arenas.
  mallopt(M_ARENA_MAX, 2);
  tessera::rpc::DisableAbslDeadlockDetection();  // issue 20 §2: 10,000 node streams
  std::string conf = tessera::DefaultConfigPath();
  bool check_only = false;
  tc::StoreOptions store_opts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-f" && i + 1 < argc) conf = argv[++i];
    else if (a == "--check-config") check_only = true;
    else if (a == "--init-state") store_opts.init_state = true;
    else if (a == "-D") continue;  // foreground is the only mode
    else if (a == "-V" || a == "--version") { std::cout << "tessera-ctld " TESSERA_VERSION "\n"; return 0; }
    else if (a == "-h" || a == "--help") { Usage(); return 0; }
    else { std::cerr << "tessera-ctld: unknown argument " << a << "\n"; Usage(); return 2; }
  }
  auto loaded = Load(conf);
  if (!loaded.ok()) {
    std::cerr << "tessera-ctld: " << loaded.status().message() << "\n";
    return 1;
  }
  tessera::sched::PrintConfigWarnings(std::cerr, "tessera-ctld", loaded->warnings);
  auto cfg = &loaded->cluster;
  // Issue 21 §2: what ctld or noded would refuse later, said before start.
  std::vector<std::string> later = tc::CheckLaterRefusals(*loaded);
  for (const auto& p : later) std::cerr << "tessera-ctld: " << (check_only ? "error: " : "warning: ") << p << "\n";
  if (check_only && !later.empty()) {
    std::cerr << "tessera-ctld: " << conf << ": " << later.size()
              << (later.size() == 1 ? " problem" : " problems") << "; configuration NOT OK\n";
    return 1;
  }
  if (check_only) {
    std::cout << conf << ": configuration OK (" << (*cfg)->nodes.size() << " nodes, "
              << (*cfg)->partitions.size() << " partitions, " << loaded->warnings.size() << " warnings)\n";
    if (const auto& t = (*cfg)->topology)  // issue 15
      std::cout << t->path << ": " << tessera::TopologyPluginName(t->kind) << " OK ("
                << (t->kind == tessera::TopologyKind::kTree ? t->switches.size() : t->blocks.size())
                << (t->kind == tessera::TopologyKind::kTree ? " switches)\n" : " blocks)\n");
    return 0;
  }
  // Blocked before any thread starts, so every thread inherits the mask and sigwait below gets them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // State files are private whatever the umask (job scripts and environments hold secrets):
  // directory 0700, database, -wal and -shm 0600 (also set explicitly by Store::Open).
  umask(077);
  bool tightened = false;
  if (tessera::Status st = tc::PrepareStateDir((*cfg)->state_dir, &tightened); !st.ok()) {
    std::cerr << "tessera-ctld: " << st.message() << "\n";
    return 1;
  }
  if (tightened) tc::Log("state directory " + (*cfg)->state_dir + " was readable by others: now mode 0700");
  std::string db = (*cfg)->state_dir + "/tessera.db";
  auto store = tc::Store::Open(db, store_opts);
  if (!store.ok()) {
    std::cerr << "tessera-ctld: " << store.status().message() << "\n";
    return 1;
  }
  auto rec = (*store)->Load();
  if (!rec.ok()) {
    std::cerr << "tessera-ctld: recovery failed: " << rec.status().message() << "\n";
    return 1;
  }
  tessera::SystemClock clock;
  tc::Core core;
  tc::Controller ctl(loaded->cluster, loaded->sched, store->get(), &clock, &core);
  // Issue 20 §3: metrics when MetricsPort= is set (the endpoint starts once ctld is up, below).
  tessera::MetricsSettings msettings;
  if (auto lines = tessera::ParseConfigFile((*cfg)->path); lines.ok()) {
    auto m = tessera::ReadMetricsSettings(*lines);  // checked when the config was loaded
    if (m.ok()) msettings = *m;
  }
  std::shared_ptr<tc::metrics::CtldMetrics> metrics;
  if (msettings.ctld_port != 0) {
    metrics = std::make_shared<tc::metrics::CtldMetrics>();
    ctl.SetMetrics(metrics.get());
    (*store)->SetCommitObserver([metrics](int64_t us, size_t batches) { metrics->StoreCommit(us, batches); });
  }
  tc::rpc::WatchHub hub;
  ctl.jobs().SetListener([&hub, metrics](const tc::JobEvent& e, const tc::JobRecord&) {
    hub.Publish(e);
    if (metrics && e.type == tc::event::kRequeued) metrics->JobRequeued();  // issue 20 §3
  });
  core.Start();
  if (tessera::Status st = core.Call([&] { return ctl.Start(*rec); }); !st.ok()) {
    std::cerr << "tessera-ctld: cannot start: " << st.message() << "\n";
    return 1;  // ~Core stops the core thread
  }
  if (rec->created) tc::Log("created a new, empty state database " + db);
  tc::Log("recovered " + std::to_string(rec->active_jobs.size()) + " active jobs from " + db +
          "; next job id " + std::to_string(std::max<uint64_t>(rec->max_job_id + 1, rec->reserved_job_id)));

  tessera::rpc::MungeCodec munge((*cfg)->munge_socket);
  tc::rpc::Authorizer auth(&munge);
  auto loader = [conf] { return Load(conf); };
  tc::rpc::ControllerService svc(&ctl, &core, store->get(), &auth, &hub, loader, &clock);
  svc.SetMetrics(metrics.get());
  tc::rpc::AgentService agent(&ctl, &core, &auth);
  auto creds = tessera::rpc::MakeServerCredentials(**cfg);
  if (!creds.ok()) {
    std::cerr << "tessera-ctld: TLS: " << creds.status().message() << "\n";
    return 1;
  }
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  std::string addr = "0.0.0.0:" + std::to_string((*cfg)->ctld_port);
  builder.AddListeningPort(addr, *creds);
  builder.RegisterService(&svc);
  builder.RegisterService(&agent);
  builder.SetMaxReceiveMessageSize(tessera::rpc::kMaxRequestBytes);  // = the local socket's bound
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 4);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::cerr << "tessera-ctld: cannot listen on " << addr << "\n";
    return 1;
  }
  tc::Log("listening on " + addr + ((*cfg)->TlsEnabled() ? " (TLS)" : " (plaintext)"));
  std::unique_ptr<tc::rpc::LocalServer> local;
  if (!(*cfg)->ctld_socket.empty()) {
    tc::rpc::LocalServerLimits limits;  // root and the cluster user keep a reserve of connections
    if (struct passwd* pw = getpwnam((*cfg)->cluster_user.c_str()))
      limits.privileged.insert(pw->pw_uid);
    auto l = tc::rpc::LocalServer::Start((*cfg)->ctld_socket, &svc, limits);
    if (l.ok()) {
      local = std::move(*l);
      tc::Log("local commands on " + (*cfg)->ctld_socket);
    } else {
      tc::Log("warning: no local socket (commands on this host use gRPC): " + l.status().message());
    }
  }

  // Issue 20 §1: the TCP wire for commands on login nodes (ControllerWirePort; never with TLS,
  // which the config check refuses), with the local socket's limits.
  std::unique_ptr<tc::rpc::LocalServer> wire;
  uint16_t wire_port = 0;
  if (auto lines = tessera::ParseConfigFile((*cfg)->path); lines.ok()) {
    auto w = tessera::ReadWirePort(*lines, (*cfg)->TlsEnabled());  // checked when loaded
    if (w.ok()) wire_port = *w;
  }
  if (wire_port != 0) {
    tc::rpc::LocalServerLimits limits;
    if (struct passwd* pw = getpwnam((*cfg)->cluster_user.c_str()))
      limits.privileged.insert(pw->pw_uid);
    auto w = tc::rpc::LocalServer::StartTcp("", wire_port, &svc, &munge, limits);
    if (!w.ok()) {
      std::cerr << "tessera-ctld: ControllerWirePort: " << w.status().message() << "\n";
      return 1;
    }
    wire = std::move(*w);
    tc::Log("commands from other hosts also on 0.0.0.0:" + std::to_string(wire_port) +
            " (wire: munge per request, plaintext)");
  }

  std::unique_ptr<tessera::metrics::MetricsServer> metrics_server;
  if (metrics) {
    auto gauges = std::make_shared<tessera::metrics::CallbackCollectable>(
        [&core, &ctl] { return core.Call([&ctl] { return tc::metrics::StateGauges(ctl); }); });
    auto m = tessera::metrics::MetricsServer::Start(msettings.address, msettings.ctld_port,
                                                   {metrics->registry(), gauges});
    if (!m.ok()) {
      std::cerr << "tessera-ctld: " << m.status().message() << "\n";
      return 1;
    }
    metrics_server = std::move(*m);
    tc::Log("metrics on http://" + msettings.address + ":" + std::to_string(metrics_server->port()) + "/metrics");
  }

  while (true) {
    int sig = 0;
    sigwait(&set, &sig);
    if (sig == SIGHUP) {
      auto next = Load(conf);
      if (!next.ok()) {
        tc::Log("SIGHUP: keeping the running configuration: " + next.status().message());
        continue;
      }
      core.Call([&] { ctl.Reconfigure(next->cluster, next->sched); return 0; });
      tc::Log("SIGHUP: configuration reloaded");
      continue;
    }
    tc::Log("signal " + std::to_string(sig) + ": shutting down");
    break;
  }
  metrics_server.reset();  // its scrapes call into the core thread: before core.Stop()
  local.reset();
  wire.reset();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  core.Stop();
  return 0;
}
