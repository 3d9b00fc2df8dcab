#include "cli/lib/command.h"

#include <cstdlib>

#include <chrono>
#include <thread>

#include <unistd.h>

#include <iostream>
#include <sstream>

#include "common/clock.h"
#include "common/client_config.h"
#include "common/cluster_config.h"
#include "cli/lib/local_controller_api.h"
#include "common/file_io.h"

extern char** environ;

namespace tessera::cli {
namespace {

constexpr std::chrono::seconds kCallDeadline{30};

Result<std::string> ReadWholeFile(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok() && text.status().code() == Code::kNotFound)
    return NotFound("unable to open file " + path);  // sbatch's wording
  return text;  // or why it could not be read ("cannot read <path>: Is a directory")
}

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

}  // namespace

int Fail(CommandContext& ctx, const std::string& msg) {
  *ctx.err << ctx.prog << ": error: " << msg << "\n";
  return 1;
}

void Warn(CommandContext& ctx, const std::string& msg) {
  *ctx.err << ctx.prog << ": warning: " << msg << "\n";
}

std::string VersionLine() { return std::string("tessera ") + TESSERA_VERSION; }

Result<ClusterConfig> LoadCommandConfig(uint16_t* wire_port) {
  std::string path = DefaultConfigPath();
  auto cfg = LoadClientConfig(path, wire_port);  // only the controller, auth and TLS keys (issue 21 §2)
  if (!cfg.ok())
    return Status(cfg.status().code(),
                  "cannot load configuration " + path + ": " + cfg.status().message());
  return cfg;
}

Result<std::unique_ptr<ControllerApi>> ConnectLocal(const ClusterConfig& cfg,
                                                    LocalControllerApi::Fallback fallback) {
  // On the controller's host, its Unix socket (no gRPC start-up, no munge round trip);
  // TESSERA_NO_LOCAL_SOCKET=1 forces gRPC (tests of the remote path).
  const char* no_local = std::getenv("TESSERA_NO_LOCAL_SOCKET");
  if (cfg.ctld_socket.empty() || (no_local && *no_local && std::string(no_local) != "0") ||
      access(cfg.ctld_socket.c_str(), F_OK) != 0)
    return Unavailable("no local controller socket");
  auto local = LocalControllerApi::Connect(cfg.ctld_socket, kCallDeadline, std::move(fallback));
  if (!local.ok()) return local.status();
  return std::unique_ptr<ControllerApi>(std::move(*local));
}

Result<std::unique_ptr<ControllerApi>> ConnectWire(const ClusterConfig& cfg, uint16_t wire_port,
                                                   LocalControllerApi::Fallback fallback) {
  // A login node: the TCP wire, plaintext with a munge credential per request; never with TLS
  // (the config refuses both). TESSERA_NO_WIRE=1 forces gRPC (benchmarks, tests).
  const char* no_wire = std::getenv("TESSERA_NO_WIRE");
  if (wire_port == 0 || cfg.TlsEnabled() || (no_wire && *no_wire && std::string(no_wire) != "0"))
    return Unavailable("no controller wire port");
  auto wire = LocalControllerApi::ConnectTcp(cfg.ctld_addr, wire_port,
                                             std::make_unique<rpc::MungeCodec>(cfg.munge_socket),
                                             kCallDeadline, std::move(fallback));
  if (!wire.ok()) return wire.status();
  return std::unique_ptr<ControllerApi>(std::move(*wire));
}

void InitMainContext(int argc, char** argv, SystemIdNames* names, CommandContext* ctx) {
  std::string prog = argc > 0 ? argv[0] : "tessera";
  size_t slash = prog.rfind('/');
  ctx->prog = slash == std::string::npos ? prog : prog.substr(slash + 1);
  for (int i = 1; i < argc; ++i) ctx->args.emplace_back(argv[i]);
  ctx->env = CurrentEnvironment();
  ctx->in = &std::cin;
  ctx->out = &std::cout;
  ctx->err = &std::cerr;
  char buf[4096];
  ctx->cwd = getcwd(buf, sizeof buf) ? buf : "/";
  ctx->uid = getuid();
  ctx->now = SystemClock().Now();
  ctx->names = names;
  ctx->read_file = ReadWholeFile;
  ctx->sleep = [](int64_t seconds) {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    return true;
  };
  ctx->clock = [] { return SystemClock().Now(); };
}

void ExitMain(int rc) {
  std::cout.flush();
  std::cerr.flush();
  std::_Exit(rc);
}

}  // namespace tessera::cli
