// Issue 21 §2: the commands read only the controller, auth and TLS keys of tessera.conf
// (common/client_config.h); daemons still refuse the same config with file:line.
#include <catch2/catch.hpp>

#include <string>

#include "common/client_config.h"
#include "common/cluster_config.h"
#include "temp_dir.h"

namespace tessera {
namespace {

const char kGood[] =
    "ClusterName=site\n"
    "SlurmctldHost=ctl1(10.0.0.1)\n"
    "SlurmctldPort=7817\n"
    "AuthInfo=socket=/run/munge/other.socket\n"
    "TlsCertFile=/etc/tessera/tls/h.crt\nTlsKeyFile=/etc/tessera/tls/h.key\nTlsCaFile=/etc/tessera/tls/ca.crt\n"
    "NodeName=n[1-2] CPUs=4 RealMemory=1000\n"
    "PartitionName=batch Nodes=ALL Default=YES\n";

TEST_CASE("client config: the controller, auth and TLS keys are read", "[client_config]") {
  testing::TempDir d;
  auto c = LoadClientConfig(d.Write("tessera.conf", kGood));
  REQUIRE(c.ok());
  CHECK(c->ctld_host == "ctl1");
  CHECK(c->ctld_addr == "10.0.0.1");
  CHECK(c->ctld_port == 7817);
  CHECK(c->munge_socket == "/run/munge/other.socket");
  CHECK(c->ctld_socket == "/run/tessera/ctld-7817.sock");
  CHECK(c->tls_ca == "/etc/tessera/tls/ca.crt");
  CHECK(c->TlsEnabled());
  CHECK(c->nodes.empty());  // not read
  // The daemons' loader gives the same client fields.
  auto full = LoadClusterConfig(d.path() + "/tessera.conf");
  REQUIRE(full.ok());
  CHECK(full->ctld_addr == c->ctld_addr);
  CHECK(full->ctld_socket == c->ctld_socket);
  CHECK(full->munge_socket == c->munge_socket);
}

TEST_CASE("client config: a typo elsewhere does not break the commands; daemons refuse it",
          "[client_config]") {
  struct Case { const char* what; std::string line; const char* where; };
  const Case cases[] = {
      {"bad scheduler value", "SchedulerInterval=5x\n", "tessera.conf:10:"},
      {"bad node line", "NodeName=n3 CPUs=many\n", "tessera.conf:10:"},
      {"unterminated quote", "PartitionName=debug Nodes=n1 \"MaxTime=1\n", "tessera.conf:10:"},
      {"token without =", "SchedulerParameters bf_window=60\n", "tessera.conf:10:"},
      {"missing include", "Include nodes-extra.conf\n", "tessera.conf:10:"},
  };
  for (const auto& k : cases) {
    SECTION(k.what) {
      testing::TempDir d;
      std::string conf = d.Write("tessera.conf", kGood + k.line);
      auto c = LoadClientConfig(conf);
      REQUIRE(c.ok());
      CHECK(c->ctld_addr == "10.0.0.1");
      auto full = LoadClusterConfig(conf);
      REQUIRE_FALSE(full.ok());
      CHECK_THAT(full.status().message(), Catch::Contains(k.where));
    }
  }
}

TEST_CASE("client config: a bad gres.conf does not break the commands", "[client_config]") {
  testing::TempDir d;
  std::string conf = d.Write("tessera.conf", kGood);
  d.Write("gres.conf", "NodeName=n9 Name=gpu Count=2\n");  // unknown node
  CHECK(LoadClientConfig(conf).ok());
  auto full = LoadClusterConfig(conf);
  REQUIRE_FALSE(full.ok());
  CHECK_THAT(full.status().message(), Catch::Contains("gres.conf:1: unknown node n9"));
}

TEST_CASE("client config: a malformed client key is an error naming file:line", "[client_config]") {
  testing::TempDir d;
  auto c = LoadClientConfig(d.Write("tessera.conf", std::string(kGood) + "SlurmctldPort=70000\n"));
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(c.status().message(), Catch::Contains("tessera.conf:10: invalid value \"70000\" for SlurmctldPort"));
  // A client key on a line the lexer cannot read is not silently replaced by a default.
  auto q = LoadClientConfig(d.Write("q.conf", "SlurmctldHost=ctl1 \"ControlAddr=10.0.0.9\n"));
  REQUIRE_FALSE(q.ok());
  CHECK_THAT(q.status().message(), Catch::Contains("q.conf:1: unterminated quote"));
  // TLS all or nothing, as for the daemons.
  auto t = LoadClientConfig(d.Write("t.conf", "SlurmctldHost=ctl1\nTlsCaFile=/ca.crt\n"));
  REQUIRE_FALSE(t.ok());
  CHECK_THAT(t.status().message(), Catch::Contains("must be set together"));
  // No such file: the path is named.
  auto m = LoadClientConfig(d.path() + "/absent.conf");
  REQUIRE_FALSE(m.ok());
  CHECK_THAT(m.status().message(), Catch::Contains("absent.conf"));
}

TEST_CASE("client config: skipped lines are reported as warnings", "[client_config]") {
  testing::TempDir d;
  auto c = LoadClientConfig(d.Write("tessera.conf", std::string(kGood) + "Oops\n"));
  REQUIRE(c.ok());
  REQUIRE(c->warnings.size() == 1);
  CHECK_THAT(c->warnings[0], Catch::StartsWith(d.path() + "/tessera.conf:10: expected Key=Value"));
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Issue 20 §1: ControllerWirePort (common/wire_config.h), read by the commands and ctld.
const char kPlain[] =
    "SlurmctldHost=ctl1(10.0.0.1)\n"
    "NodeName=n1 CPUs=4 RealMemory=1000\n"
    "PartitionName=batch Nodes=ALL Default=YES\n";

TEST_CASE("client config: ControllerWirePort is read, off by default", "[client_config][wire]") {
  testing::TempDir d;
  uint16_t port = 1;
  REQUIRE(LoadClientConfig(d.Write("a.conf", kPlain), &port).ok());
  CHECK(port == 0);
  REQUIRE(LoadClientConfig(d.Write("b.conf", std::string(kPlain) + "ControllerWirePort=6819\n"), &port).ok());
  CHECK(port == 6819);
  CHECK(LoadClusterConfig(d.path() + "/b.conf").ok());  // a known key for the daemons too
}

TEST_CASE("client config: ControllerWirePort with TLS or a bad value is refused with file:line",
          "[client_config][wire]") {
  testing::TempDir d;
  std::string tls = std::string(kPlain) + "ControllerWirePort=6819\n" +
                    "TlsCertFile=/t/h.crt\nTlsKeyFile=/t/h.key\nTlsCaFile=/t/ca.crt\n";
  std::string conf = d.Write("tls.conf", tls);
  auto c = LoadClientConfig(conf);
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(c.status().message(), Catch::Contains("tls.conf:4: ControllerWirePort is a plaintext port"));
  auto full = LoadClusterConfig(conf);
  REQUIRE_FALSE(full.ok());
  CHECK_THAT(full.status().message(), Catch::Contains("cannot be used with TLS"));
  conf = d.Write("bad.conf", std::string(kPlain) + "ControllerWirePort=70000\n");
  c = LoadClientConfig(conf);
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(c.status().message(),
             Catch::Contains("bad.conf:4: invalid value \"70000\" for ControllerWirePort"));
  CHECK_FALSE(LoadClusterConfig(conf).ok());
}

}  // namespace
}  // namespace tessera
