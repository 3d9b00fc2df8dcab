// trun's production hooks (trun.h): node clients from tessera.conf with munge, signal delivery
// through a sigtimedwait thread, the monotonic clock.
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <atomic>
#include <mutex>
#include <memory>
#include <thread>

#include "cli/lib/trun.h"
#include "cli/lib/tstat.h"
#include "common/client_config.h"
#include "common/cluster_config.h"

namespace tessera::cli {
namespace {

sigset_t ForwardedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2}) sigaddset(&set, s);
  return set;
}

std::function<void()> WatchSignals(std::function<void(int)> handler) {
  auto stop = std::make_shared<std::atomic<bool>>(false);
  auto thread = std::make_shared<std::thread>([stop, handler = std::move(handler)] {
    sigset_t set = ForwardedSignals();
    timespec tick{0, 200'000'000};
    while (!*stop) {
      int sig = ::sigtimedwait(&set, nullptr, &tick);
      if (sig > 0) handler(sig);
    }
  });
  return [stop, thread] {
    *stop = true;
    thread->join();
  };
}

int64_t MonoMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

}  // namespace

namespace {
// Node clients for tstat and tattach (issue 19): the client keys of tessera.conf and munge, loaded once
// (thread-safe: tattach connects from several threads).
NodeConnector ConfigNodeConnector() {
  struct State {
    std::mutex mu;
    std::shared_ptr<ClusterConfig> cfg;
    std::shared_ptr<rpc::CredentialCodec> codec;
  };
  auto st = std::make_shared<State>();
  return [st](const pb::StepNode& n) -> Result<std::unique_ptr<StepAgentApi>> {
    std::lock_guard<std::mutex> lock(st->mu);
    if (!st->cfg) {
      auto loaded = LoadClientConfig(DefaultConfigPath());
      if (!loaded.ok()) return loaded.status();
      st->cfg = std::make_shared<ClusterConfig>(std::move(*loaded));
      st->codec = std::make_shared<rpc::MungeCodec>(st->cfg->munge_socket);
    }
    std::string addr = n.address().empty() ? n.node() : n.address();
    return std::unique_ptr<StepAgentApi>(std::make_unique<GrpcStepAgentApi>(
        *st->cfg, st->codec, n.node(), addr, static_cast<uint16_t>(n.port())));
  };
}
}  // namespace

int RunTstat(CommandContext& ctx) { return RunTstatWith(ctx, ConfigNodeConnector()); }
int RunTattach(CommandContext& ctx) { return RunTattachWith(ctx, ConfigNodeConnector()); }

int RunTrun(CommandContext& ctx) {
  // Before any thread exists (gRPC's included), so every thread inherits the blocked set and
  // only the watcher receives these signals.
  sigset_t set = ForwardedSignals();
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::shared_ptr<ClusterConfig> cfg;
  std::shared_ptr<rpc::CredentialCodec> codec;
  TrunHooks hooks;
  hooks.connect_node = [&](const pb::StepNode& n) -> Result<std::unique_ptr<StepAgentApi>> {
    if (!cfg) {
      std::string path = DefaultConfigPath();
      auto loaded = LoadClientConfig(path);  // TLS and munge only (client_config.h)
      if (!loaded.ok())
        return Status(loaded.status().code(),
                      "cannot load configuration " + path + ": " + loaded.status().message());
      cfg = std::make_shared<ClusterConfig>(std::move(*loaded));
      codec = std::make_shared<rpc::MungeCodec>(cfg->munge_socket);
    }
    if (n.port() == 0 || n.port() > 65535)
      return InvalidArgument("the controller gave node " + n.node() + " no valid port");
    std::string addr = n.address().empty() ? n.node() : n.address();
    return std::unique_ptr<StepAgentApi>(std::make_unique<GrpcStepAgentApi>(
        *cfg, codec, n.node(), addr, static_cast<uint16_t>(n.port())));
  };
  hooks.watch_signals = WatchSignals;
  hooks.mono_ms = MonoMs;
  return RunTrunWith(ctx, hooks);
}

}  // namespace tessera::cli
