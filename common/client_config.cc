#include "common/client_config.h"

#include "common/duration.h"
#include "common/wire_config.h"

namespace tessera {
namespace {

Status Bad(const std::string& where, const ConfigPair& p, const std::string& why) {
  return InvalidArgument(where + ": invalid value \"" + p.value + "\" for " + p.raw_key + ": " + why);
}

// Lines that describe something else: their keys are never the client's.
bool OtherRecord(const ConfigLine& l) {
  const std::string& h = l.Head();
  return h == "nodename" || h == "partitionname" || h == "qosname" || h == "accountname" ||
         h == "username";
}

}  // namespace

Result<bool> ApplyClientKey(const ConfigPair& p, const std::string& where, ClusterConfig* c,
                            bool* socket_set) {
  const std::string& k = p.key;
  if (k == "slurmctldhost" || k == "controlmachine") {
    size_t open = p.value.find('(');
    c->ctld_host = p.value.substr(0, open);
    if (open != std::string::npos) {
      if (p.value.back() != ')') return Bad(where, p, "expected host or host(addr)");
      c->ctld_addr = p.value.substr(open + 1, p.value.size() - open - 2);
    }
    if (c->ctld_host.empty()) return Bad(where, p, "expected host or host(addr)");
    return true;
  }
  if (k == "controladdr") {
    c->ctld_addr = p.value;
    return true;
  }
  if (k == "slurmctldport") {
    auto n = ParseUint(p.value, "port");
    if (!n.ok() || *n == 0 || *n > 65535) return Bad(where, p, "expected a port number");
    c->ctld_port = static_cast<uint16_t>(*n);
    return true;
  }
  if (k == "controllersocket") {
    if (!p.value.empty() && p.value != "none" && p.value[0] != '/')
      return Bad(where, p, "expected an absolute path or none");
    c->ctld_socket = p.value == "none" ? "" : p.value;
    *socket_set = true;
    return true;
  }
  if (k == "authinfo") {
    for (const auto& opt : SplitList(p.value))
      if (opt.rfind("socket=", 0) == 0) c->munge_socket = opt.substr(7);
    return true;
  }
  if (k == "tlscertfile") return c->tls_cert = p.value, true;
  if (k == "tlskeyfile") return c->tls_key = p.value, true;
  if (k == "tlscafile") return c->tls_ca = p.value, true;
  return false;
}

Status FinishClientKeys(ClusterConfig* c, bool socket_set) {
  if (!c->tls_cert.empty() || !c->tls_key.empty() || !c->tls_ca.empty()) {
    if (c->tls_cert.empty() || c->tls_key.empty() || c->tls_ca.empty())
      return InvalidArgument(c->path + ": TlsCertFile, TlsKeyFile and TlsCaFile must be set together");
  }
  if (c->ctld_addr.empty()) c->ctld_addr = c->ctld_host;
  if (!socket_set) c->ctld_socket = "/run/tessera/ctld-" + std::to_string(c->ctld_port) + ".sock";
  return Status::Ok();
}

Result<ClusterConfig> LoadClientConfig(const std::string& path, uint16_t* wire_port) {
  std::vector<std::string> skipped;
  auto lines = ParseConfigFileLenient(path, &skipped);
  if (!lines.ok()) return lines.status();
  ClusterConfig c;
  c.path = path;
  bool socket_set = false;
  for (const auto& l : *lines) {
    if (l.pairs.empty() || OtherRecord(l)) continue;
    for (const auto& p : l.pairs) {
      auto applied = ApplyClientKey(p, l.Where(), &c, &socket_set);
      if (!applied.ok()) return applied.status();
    }
  }
  // A skipped line that held a client key: the command would use a default instead of what the
  // admin wrote (another controller, no TLS), so that is an error after all.
  for (const auto& s : skipped) {
    std::string lower = ToLower(s);
    for (const char* k : {"slurmctldhost", "controlmachine", "controladdr", "slurmctldport",
                          "controllersocket", "authinfo", "tlscertfile", "tlskeyfile", "tlscafile",
                          "controllerwireport"})
      if (lower.find(std::string(k) + "=") != std::string::npos) return InvalidArgument(s);
  }
  TESSERA_RETURN_IF_ERROR(FinishClientKeys(&c, socket_set));
  auto wire = ReadWirePort(*lines, c.TlsEnabled());  // issue 20 §1
  if (!wire.ok()) return wire.status();
  if (wire_port) *wire_port = *wire;
  c.warnings = std::move(skipped);
  return c;
}

}  // namespace tessera
