// Issue 20 §3: the metrics endpoint (common/metrics), ctld's counters and histograms
// (ctld/metrics/ctld_metrics.h), the RPC statistics (ctld/rpc/rpc_stats.h) and the MetricsPort=
// / MetricsAddress= keys. The endpoint is fetched over a real TCP connection.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <string>

#include "common/cluster_config.h"
#include "common/metrics_config.h"
#include "common/metrics/families.h"
#include "common/metrics/metrics_server.h"
#include "ctld/metrics/ctld_metrics.h"
#include "ctld/rpc/rpc_stats.h"

namespace tessera {
namespace {

// GET /metrics from 127.0.0.1:port; the whole answer (headers and body).
std::string Get(uint16_t port, const std::string& path = "/metrics") {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  std::string req = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  REQUIRE(::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size()));
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

bool Has(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

TEST_CASE("metrics: ctld counters and histograms in the text exposition format", "[metrics]") {
  ctld::metrics::CtldMetrics m;
  m.JobSubmitted("debug");
  m.JobSubmitted("debug");
  m.JobSubmitted("gpu");
  m.JobStarted("debug");
  m.JobFinished("debug", "COMPLETED");
  m.JobFinished("gpu", "FAILED");
  m.Cycle(1500, 42, 3, 1);
  m.StoreCommit(2500, 7);
  auto gauges = std::make_shared<metrics::CallbackCollectable>([] {
    return std::vector<prometheus::MetricFamily>{metrics::GaugeFamily(
        "tessera_nodes", "Nodes now, by state", {"state"}, {{{"IDLE"}, 2}, {{"DOWN"}, 1}})};
  });
  auto server = metrics::MetricsServer::Start("127.0.0.1", 0, {m.registry(), gauges});
  INFO(server.status().ToString());
  REQUIRE(server.ok());
  REQUIRE((*server)->port() != 0);
  std::string text = Get((*server)->port());
  INFO(text);
  CHECK(Has(text, "HTTP/1.1 200 OK"));
  CHECK(Has(text, "Content-Type: text/plain"));
  CHECK(Has(text, "# TYPE tessera_jobs_submitted_total counter"));
  CHECK(Has(text, "tessera_jobs_submitted_total{partition=\"debug\"} 2"));
  CHECK(Has(text, "tessera_jobs_submitted_total{partition=\"gpu\"} 1"));
  CHECK(Has(text, "tessera_jobs_started_total{partition=\"debug\"} 1"));
  CHECK(Has(text, "tessera_jobs_finished_total{partition=\"gpu\",state=\"FAILED\"} 1"));
  CHECK(Has(text, "# TYPE tessera_sched_cycle_seconds histogram"));
  CHECK(Has(text, "tessera_sched_cycle_seconds_count 1"));
  CHECK(Has(text, "tessera_sched_cycle_seconds_sum 0.0015"));
  CHECK(Has(text, "tessera_sched_cycle_seconds_bucket{le=\"0.0025\"} 1"));
  CHECK(Has(text, "tessera_sched_cycle_seconds_bucket{le=\"0.001\"} 0"));
  CHECK(Has(text, "tessera_sched_cycle_jobs_considered_sum 42"));
  CHECK(Has(text, "tessera_sched_jobs_started_total 3"));
  CHECK(Has(text, "tessera_sched_jobs_backfilled_total 1"));
  CHECK(Has(text, "tessera_store_commit_seconds_count 1"));
  CHECK(Has(text, "tessera_store_commit_batch_size_sum 7"));
  CHECK(Has(text, "# TYPE tessera_nodes gauge"));
  CHECK(Has(text, "tessera_nodes{state=\"IDLE\"} 2"));
  CHECK(Has(text, "tessera_nodes{state=\"DOWN\"} 1"));
}

TEST_CASE("metrics: RPC statistics by method, role and user feed sdiag and the histogram", "[metrics]") {
  ctld::metrics::CtldMetrics m;
  ctld::rpc::RpcStats stats;
  stats.SetMetrics(&m);
  {
    ctld::rpc::RpcTimer t(&stats, "SubmitJob");
    ctld::rpc::NoteCaller(1000, "user");
  }
  {
    ctld::rpc::RpcTimer t(&stats, "SubmitJob");
    ctld::rpc::NoteCaller(0, "admin");
  }
  { ctld::rpc::RpcTimer t(&stats, "Ping"); }  // refused before authentication: no user
  auto by_method = stats.ByMethod();
  CHECK(by_method["SubmitJob"].count == 2);
  CHECK(by_method["Ping"].count == 1);
  auto by_user = stats.ByUser();
  CHECK(by_user.size() == 2);
  CHECK(by_user[1000].count == 1);
  CHECK(by_user[0].count == 1);
  auto server = metrics::MetricsServer::Start("127.0.0.1", 0, {m.registry()});
  REQUIRE(server.ok());
  std::string text = Get((*server)->port());
  INFO(text);
  CHECK(Has(text, "tessera_rpc_duration_seconds_count{method=\"SubmitJob\",role=\"user\"} 1"));
  CHECK(Has(text, "tessera_rpc_duration_seconds_count{method=\"SubmitJob\",role=\"admin\"} 1"));
  CHECK(Has(text, "tessera_rpc_duration_seconds_count{method=\"Ping\",role=\"unauthenticated\"} 1"));
  CHECK(ctld::rpc::ProcessThreadCount() >= 3);  // this thread and the endpoint's two
}

TEST_CASE("metrics: a port in use is an error naming the address", "[metrics]") {
  auto first = metrics::MetricsServer::Start("127.0.0.1", 0, {std::make_shared<prometheus::Registry>()});
  REQUIRE(first.ok());
  uint16_t port = (*first)->port();
  auto second = metrics::MetricsServer::Start("127.0.0.1", port, {std::make_shared<prometheus::Registry>()});
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == Code::kUnavailable);
  CHECK_THAT(second.status().message(),
             Catch::StartsWith("cannot serve metrics on 127.0.0.1:" + std::to_string(port)));
  CHECK(Has(Get(port), "200 OK"));  // the first one still serves
}

Result<ClusterConfig> Build(const std::string& text) {
  auto lines = ParseConfigText(text, "tessera.conf");
  if (!lines.ok()) return lines.status();
  return BuildClusterConfig(*lines, {});
}

MetricsSettings Settings(const std::string& text) {
  auto lines = ParseConfigText(text, "tessera.conf");
  REQUIRE(lines.ok());
  auto s = ReadMetricsSettings(*lines);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return *s;
}

TEST_CASE("metrics: MetricsPort and MetricsAddress keys", "[metrics][cluster_config]") {
  const std::string none = "NodeName=n1\nPartitionName=p Nodes=n1\n";
  auto plain = Build(none);
  REQUIRE(plain.ok());
  CHECK(plain->warnings.empty());
  MetricsSettings off = Settings(none);
  CHECK(off.ctld_port == 0);  // off by default
  CHECK(off.address == "0.0.0.0");
  CHECK(off.node_ports.empty());

  const std::string text =
      "MetricsPort=9400\nMetricsAddress=127.0.0.1\nNodeName=DEFAULT MetricsPort=9500\n"
      "NodeName=a1\nNodeName=n[1-3] Port=7001-7003 MetricsPort=9401-9403\nNodeName=m1 MetricsPort=0\n"
      "PartitionName=p Nodes=a1,n[1-3],m1\n";
  auto c = Build(text);
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  CHECK(c->warnings.empty());  // accepted keys, no "unknown key" warnings
  MetricsSettings s = Settings(text);
  CHECK(s.ctld_port == 9400);
  CHECK(s.address == "127.0.0.1");
  CHECK(s.node_ports == std::map<std::string, uint16_t>{{"a1", 9500}, {"n1", 9401}, {"n2", 9402}, {"n3", 9403}});

  // Bad values are refused when the configuration is loaded, naming file:line.
  auto bad = Build("MetricsPort=http\n" + none);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "tessera.conf:1: invalid value \"http\" for MetricsPort: expected a port number (0 = none)");
  auto range = Build("NodeName=n[1-3] MetricsPort=9401-9402\nPartitionName=p Nodes=n[1-3]\n");
  REQUIRE_FALSE(range.ok());
  CHECK(range.status().message() == "tessera.conf:1: MetricsPort range 9401-9402 has 2 ports for 3 nodes");
  auto big = Build("NodeName=n1 MetricsPort=70000\nPartitionName=p Nodes=n1\n");
  REQUIRE_FALSE(big.ok());
  CHECK(big.status().message() == "tessera.conf:1: invalid MetricsPort \"70000\"");
  auto empty = Build("MetricsAddress=\n" + none);
  REQUIRE_FALSE(empty.ok());
  CHECK_THAT(empty.status().message(), Catch::Contains("MetricsAddress"));
}

}  // namespace
}  // namespace tessera
