#pragma once
// A Prometheus endpoint (issue 20 §3): prometheus-cpp's Exposer serving GET /metrics in the text
// exposition format on ADDRESS:PORT, from its own threads (two). Each scrape calls Collect() of
// every registered collectable on those threads: collectables must be thread-safe.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/collectable.h>

#include "common/status.h"

namespace prometheus {
class Exposer;
}

namespace tessera::metrics {

class MetricsServer {
 public:
  // Listens on address:port (port 0: a free port, see port()). Errors (address in use, bad
  // address) come back as kUnavailable naming the address; nothing is left listening.
  static Result<std::unique_ptr<MetricsServer>> Start(
      const std::string& address, uint16_t port,
      const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables);
  ~MetricsServer();
  uint16_t port() const { return port_; }

 private:
  MetricsServer() = default;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::vector<std::shared_ptr<prometheus::Collectable>> keep_;
  uint16_t port_ = 0;
};

}  // namespace tessera::metrics
