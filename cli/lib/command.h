#pragma once
// What a user command runs with, so that each command is a plain function that tests can call
// with fakes: arguments, environment, streams, the caller's identity and clock reading, name
// lookups, file reading and a connector that loads tessera.conf and opens the controller API
// only when the command needs it (so --help works without a config).
//
// Every Run* function returns the process exit status: 0 success, 1 any error (printed to
// `err` as "<prog>: error: <message>").
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/lib/controller_api.h"
#include "cli/lib/id_names.h"
#include "common/status.h"

namespace tessera::cli {

struct CommandContext {
  std::string prog;                        // "tbatch", used in messages
  std::vector<std::string> args;           // without the program name
  std::map<std::string, std::string> env;  // the caller's environment
  std::istream* in = nullptr;
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  std::string cwd;
  uint32_t uid = 0;
  int64_t now = 0;
  const IdNames* names = nullptr;
  // Reads a whole file (the batch script).
  std::function<Result<std::string>(const std::string& path)> read_file;
  // Waits `seconds` (tbatch --wait, tqueue -i); returns false when the command should stop
  // instead (tests end loops this way). Production: sleeps and returns true.
  std::function<bool(int64_t seconds)> sleep;
  // Reads the clock again after a sleep (production: time(nullptr)).
  std::function<int64_t()> clock;
  // Loads the config and connects; called at most once per command.
  std::function<Result<std::unique_ptr<ControllerApi>>()> connect;
};

int RunTbatch(CommandContext& ctx);
int RunTqueue(CommandContext& ctx);
int RunTcancel(CommandContext& ctx);
int RunTinfo(CommandContext& ctx);
int RunTcontrol(CommandContext& ctx);
int RunTacct(CommandContext& ctx);
int RunTrun(CommandContext& ctx);  // trun.h
int RunTacctmgr(CommandContext& ctx);  // tacctmgr_cmd.cc (issue 16 §1)
int RunTshare(CommandContext& ctx);  // sshare (issue 16 §3, tshare_cmd.cc)
int RunTprio(CommandContext& ctx);   // sprio (issue 16 §3, tprio_cmd.cc)

// Prints "<prog>: error: <msg>" and returns 1.
int Fail(CommandContext& ctx, const std::string& msg);
// "<prog>: warning: <msg>".
void Warn(CommandContext& ctx, const std::string& msg);
// "tessera 0.1.0".
std::string VersionLine();

// The production context for main(): real environment, std streams, getcwd, getuid, system
// clock and passwd lookups (`names` must outlive the command); `connect` is left to the caller.
void InitMainContext(int argc, char** argv, SystemIdNames* names, CommandContext* ctx);
// Flushes std streams and _Exits with rc: no static destructors, no gRPC shutdown (several ms of
// a command's life; no daemon state lives in a command).
[[noreturn]] void ExitMain(int rc);
// Loads the client keys of DefaultConfigPath() (common/client_config.h: controller, auth, TLS;
// other lines are not read), or an error naming it. `*wire_port` (when given) gets
// ControllerWirePort (0 = off; common/wire_config.h).
Result<ClusterConfig> LoadCommandConfig(uint16_t* wire_port = nullptr);
// The controller's Unix socket (a 30 s deadline per call) when this host has it and
// TESSERA_NO_LOCAL_SOCKET is unset or "0"; kUnavailable otherwise. Calls ctld refuses on the
// socket (too many connections from this uid) go to `fallback` (local_controller_api.h).
Result<std::unique_ptr<ControllerApi>> ConnectLocal(
    const ClusterConfig& cfg,
    std::function<Result<std::unique_ptr<ControllerApi>>()> fallback = nullptr);

// The controller's TCP wire (issue 20 §1, rpc/wire_tcp.h) at ctld_addr:`wire_port` with a munge
// credential per request (a 30 s deadline per call), when `wire_port` is set, TLS is not and
// TESSERA_NO_WIRE is unset or "0"; kUnavailable otherwise or when nothing accepts there (the
// caller then takes gRPC). Calls ctld refuses there go to `fallback`.
Result<std::unique_ptr<ControllerApi>> ConnectWire(
    const ClusterConfig& cfg, uint16_t wire_port,
    std::function<Result<std::unique_ptr<ControllerApi>>()> fallback = nullptr);

// main() of a command (run_main.cc): its controller is the local socket, else the TCP wire when
// configured, else gRPC + munge (and gRPC + munge for whatever the first two refuse).
int RunMain(int argc, char** argv, int (*run)(CommandContext&));

}  // namespace tessera::cli
