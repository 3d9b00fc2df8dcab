#include "common/metrics/metrics_server.h"

#include <exception>

#include <prometheus/exposer.h>

namespace tessera::metrics {

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const std::string& address, uint16_t port,
    const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables) {
  // civetweb's listening_ports syntax: an IPv6 address goes in brackets.
  std::string where = (address.find(':') != std::string::npos ? "[" + address + "]" : address) +
                      ":" + std::to_string(port);
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  try {
    s->exposer_ = std::make_unique<prometheus::Exposer>(where, 2);
  } catch (const std::exception& e) {
    return Unavailable("cannot serve metrics on " + where + ": " + e.what());
  }
  auto ports = s->exposer_->GetListeningPorts();
  if (ports.empty()) return Unavailable("cannot serve metrics on " + where + ": no listening port");
  s->port_ = static_cast<uint16_t>(ports.front());
  for (const auto& c : collectables) {
    s->keep_.push_back(c);
    s->exposer_->RegisterCollectable(c);
  }
  return s;
}

MetricsServer::~MetricsServer() = default;

}  // namespace tessera::metrics
