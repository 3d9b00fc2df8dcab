#pragma once
// What a user command (and anything else that only talks to the controller) reads from
// tessera.conf: the controller's address and port, its local socket, munge's socket and the
// TLS files (issue 21 §2). Every other line is left alone, so a typo in a scheduler key, a
// partition or gres.conf does not break tbatch/tqueue on every host; the daemons still refuse
// such a config with file:line (LoadClusterConfig, ctld's LoadConfig).
//
// A line the lexer cannot read is skipped (ParseConfigFileLenient) unless it holds one of the
// keys read here; a malformed value of one of these keys is an error naming file:line.
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "common/config_file.h"
#include "common/status.h"

namespace tessera {

// As ParseConfigFile (config_file.h), but a line that cannot be read (a bad token, an
// unterminated quote, a NUL byte, an Include that fails) is left out and named in `skipped`
// ("file:line: message: <the line's text>") instead of failing the parse; only an unreadable
// top-level `path` is an error. Defined in config_file.cc.
Result<std::vector<ConfigLine>> ParseConfigFileLenient(const std::string& path,
                                                       std::vector<std::string>* skipped);

// A ClusterConfig with only the client fields set (path, ctld_host, ctld_addr, ctld_port,
// ctld_socket, munge_socket, tls_*); `warnings` names the lines that were skipped. `*wire_port`
// (when given) gets ControllerWirePort (common/wire_config.h; 0 = off).
Result<ClusterConfig> LoadClientConfig(const std::string& path, uint16_t* wire_port = nullptr);

// --- shared with LoadClusterConfig (cluster_config.cc) ---
// Applies `p` when it is one of the client keys (SlurmctldHost/ControlMachine, ControlAddr,
// SlurmctldPort, ControllerSocket, AuthInfo, TlsCertFile, TlsKeyFile, TlsCaFile): true when
// it was one, an error "where: invalid value ..." when its value is malformed.
// `*socket_set` records that ControllerSocket was given.
Result<bool> ApplyClientKey(const ConfigPair& p, const std::string& where, ClusterConfig* c,
                            bool* socket_set);
// After every line: the Tls keys all three or none; ctld_addr defaults to ctld_host; the
// controller socket to /run/tessera/ctld-<port>.sock unless given.
Status FinishClientKeys(ClusterConfig* c, bool socket_set);

}  // namespace tessera
