// Issue 20 §1: ctld's TCP wire (rpc/wire_tcp.h, LocalServer::StartTcp) for commands on login
// nodes: the local socket's framing with a munge credential per request. A fake codec stands in
// for munged (it refuses malformed and replayed credentials as munged does); the server must run
// a call as the credential's uid/gid, decode every request, refuse what has no valid credential
// without running it, keep one uid per connection, apply the local socket's limits (a refusal the
// command takes to gRPC) and its frame bound; the command's connector falls back to gRPC when
// the port is closed.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cli/lib/command.h"
#include "cli/lib/local_controller_api.h"
#include "ctld/rpc/local_server.h"
#include "fallback_api.h"
#include "rpc/local_wire.h"
#include "rpc/wire_tcp.h"

namespace {

namespace wire = tessera::rpc::local;
using tessera::testing::FallbackApi;
using tessera::Code;
using tessera::Result;
using tessera::ctld::rpc::LocalCallContext;
using tessera::ctld::rpc::LocalServer;
using tessera::ctld::rpc::LocalServerLimits;

// Credentials "cred:UID:GID:NONCE"; Decode refuses anything else, and a nonce seen before
// (munged's replay cache). Encode makes a fresh one for `uid`/`gid`.
class FakeMunge final : public tessera::rpc::CredentialCodec {
 public:
  FakeMunge(uint32_t uid = 1000, uint32_t gid = 100) : uid_(uid), gid_(gid) {}
  Result<std::string> Encode(const std::string&) const override {
    static std::atomic<unsigned> next{0};  // fresh across codecs, as munged's are
    return "cred:" + std::to_string(uid_) + ":" + std::to_string(gid_) + ":" +
           std::to_string(++next);
  }
  Result<tessera::rpc::Identity> Decode(const std::string& cred) const override {
    std::lock_guard<std::mutex> l(mu_);
    unsigned uid = 0, gid = 0, nonce = 0;
    if (sscanf(cred.c_str(), "cred:%u:%u:%u", &uid, &gid, &nonce) != 3)
      return tessera::Unauthenticated("munge credential rejected: Invalid credential format");
    if (!seen_.insert(cred).second)
      return tessera::Unauthenticated("munge credential rejected: Replayed credential");
    tessera::rpc::Identity id;
    id.uid = uid;
    id.gid = gid;
    id.origin = "127.0.0.1";
    return id;
  }
  mutable std::mutex mu_;
  mutable std::set<std::string> seen_;
  uint32_t uid_, gid_;
};

struct Seen {
  uint32_t uid, gid;
  std::string host, where, origin;
};

class RecordingService final : public tessera::v1::Controller::Service {
 public:
  grpc::Status Ping(grpc::ServerContext* ctx, const tessera::v1::PingRequest*,
                    tessera::v1::PingResponse*) override {
    auto* c = dynamic_cast<LocalCallContext*>(ctx);
    std::lock_guard<std::mutex> l(mu);
    calls.push_back(c ? Seen{c->uid(), c->gid(), c->host(), c->where(), c->origin()}
                      : Seen{~0u, ~0u, "", "", ""});
    return grpc::Status::OK;
  }
  size_t Calls() {
    std::lock_guard<std::mutex> l(mu);
    return calls.size();
  }
  std::mutex mu;
  std::vector<Seen> calls;
};

struct Served {
  RecordingService svc;
  FakeMunge munge;  // the server's (decodes)
  std::unique_ptr<LocalServer> server;
  explicit Served(LocalServerLimits limits = {}) {
    auto s = LocalServer::StartTcp("127.0.0.1", 0, &svc, &munge, limits);
    REQUIRE(s.ok());
    server = std::move(*s);
  }
  int Connect() {
    auto fd = tessera::rpc::wire::ConnectTcp("127.0.0.1", server->Port(), 2000, 5000);
    REQUIRE(fd.ok());
    return *fd;
  }
};

std::string PingBytes() { return tessera::v1::PingRequest().SerializeAsString(); }

// True when the server closed `fd` (read gives 0 or a reset) within 5 s.
bool ClosedByServer(int fd) {
  char b[256];
  while (true) {
    ssize_t r = read(fd, b, sizeof b);
    if (r == 0 || (r < 0 && errno == ECONNRESET)) return true;
    if (r < 0) return false;
  }
}

}  // namespace

TEST_CASE("wire: a call runs as the credential's uid and gid, from the peer's address") {
  Served s;
  auto api = tessera::cli::LocalControllerApi::ConnectTcp(
      "127.0.0.1", s.server->Port(), std::make_unique<FakeMunge>(1234, 567), std::chrono::seconds(5));
  REQUIRE(api.ok());
  REQUIRE((*api)->Ping(tessera::v1::PingRequest()).ok());
  REQUIRE((*api)->Ping(tessera::v1::PingRequest()).ok());  // the same connection, a fresh credential
  REQUIRE(s.svc.calls.size() == 2);
  CHECK(s.svc.calls[0].uid == 1234);
  CHECK(s.svc.calls[0].gid == 567);
  CHECK(s.svc.calls[0].host == "127.0.0.1");
  CHECK_THAT(s.svc.calls[0].where, Catch::StartsWith("wire ipv4:127.0.0.1:"));
  CHECK(s.svc.calls[0].origin == "127.0.0.1");
  CHECK(s.munge.seen_.size() == 2);  // both requests were decoded
  CHECK((*api)->Target() == "127.0.0.1:" + std::to_string(s.server->Port()));
}

TEST_CASE("wire: a bad credential is refused UNAUTHENTICATED and not run") {
  Served s;
  int fd = s.Connect();
  std::string bad = "not-a-credential";
  bool not_run = true;
  auto r = wire::Call(fd, "Ping", PingBytes(), &not_run, &bad);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kUnauthenticated);
  CHECK_THAT(r.status().message(), Catch::Contains("Invalid credential"));
  CHECK_FALSE(not_run);  // an answer, not a refusal: the command shows it, no gRPC retry
  CHECK(ClosedByServer(fd));
  CHECK(s.svc.Calls() == 0);
  close(fd);
}

TEST_CASE("wire: a replayed credential is refused, on another connection too") {
  Served s;
  std::string cred = *FakeMunge(1000, 100).Encode("");
  int a = s.Connect();
  REQUIRE(wire::Call(a, "Ping", PingBytes(), nullptr, &cred).ok());
  auto again = wire::Call(a, "Ping", PingBytes(), nullptr, &cred);  // the same connection
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == Code::kUnauthenticated);
  CHECK_THAT(again.status().message(), Catch::Contains("Replayed"));
  close(a);
  int b = s.Connect();  // a captured credential sent by someone else
  auto stolen = wire::Call(b, "Ping", PingBytes(), nullptr, &cred);
  REQUIRE_FALSE(stolen.ok());
  CHECK(stolen.status().code() == Code::kUnauthenticated);
  close(b);
  CHECK(s.svc.Calls() == 1);
}

TEST_CASE("wire: a frame without a credential (an unknown caller) is refused and not run") {
  Served s;
  SECTION("the local socket's frame: no credential at all") {
    int fd = s.Connect();
    auto r = wire::Call(fd, "Ping", PingBytes());  // no credential: the local form
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK(ClosedByServer(fd));
    close(fd);
  }
  SECTION("an empty credential") {
    int fd = s.Connect();
    std::string empty;
    auto r = wire::Call(fd, "Ping", PingBytes(), nullptr, &empty);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kUnauthenticated);
    CHECK_THAT(r.status().message(), Catch::Contains("no munge credential"));
    close(fd);
  }
  SECTION("a credential over 8 KiB") {
    int fd = s.Connect();
    std::string big(wire::kMaxCredential + 1, 'c');
    auto r = wire::Call(fd, "Ping", PingBytes(), nullptr, &big);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kUnauthenticated);
    CHECK_THAT(r.status().message(), Catch::Contains("too large"));
    close(fd);
  }
  CHECK(s.svc.Calls() == 0);
  CHECK(s.munge.seen_.empty());
}

TEST_CASE("wire: a connection carries one uid's calls; another uid's request is refused") {
  Served s;
  int fd = s.Connect();
  std::string alice = *FakeMunge(1000, 100).Encode("");
  std::string bob = *FakeMunge(1001, 100).Encode("");
  bob += "x";  // a different nonce from alice's
  REQUIRE(wire::Call(fd, "Ping", PingBytes(), nullptr, &alice).ok());
  auto r = wire::Call(fd, "Ping", PingBytes(), nullptr, &bob);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kPermissionDenied);
  CHECK_THAT(r.status().message(), Catch::Contains("one user (uid 1000), not of uid 1001"));
  CHECK(ClosedByServer(fd));
  close(fd);
  CHECK(s.svc.Calls() == 1);
}

TEST_CASE("wire: a frame over the request bound is refused before it is read") {
  Served s;
  int fd = s.Connect();
  uint32_t n = wire::kMaxRequestFrame + 1;
  char h[4] = {static_cast<char>(n), static_cast<char>(n >> 8), static_cast<char>(n >> 16),
               static_cast<char>(n >> 24)};
  REQUIRE(send(fd, h, 4, MSG_NOSIGNAL) == 4);
  REQUIRE(send(fd, "abc", 3, MSG_NOSIGNAL) == 3);
  CHECK(ClosedByServer(fd));
  close(fd);
  CHECK(s.svc.Calls() == 0);
  CHECK(s.munge.seen_.empty());
}

TEST_CASE("wire: a uid over its connection limit is refused on its first request; the command "
          "takes gRPC") {
  LocalServerLimits limits;
  limits.per_uid = 1;
  Served s(limits);
  auto first = tessera::cli::LocalControllerApi::ConnectTcp(
      "127.0.0.1", s.server->Port(), std::make_unique<FakeMunge>(1000, 100), std::chrono::seconds(5));
  REQUIRE(first.ok());
  REQUIRE((*first)->Ping(tessera::v1::PingRequest()).ok());  // holds uid 1000's one connection
  int fallback_calls = 0;
  auto second = tessera::cli::LocalControllerApi::ConnectTcp(
      "127.0.0.1", s.server->Port(), std::make_unique<FakeMunge>(1000, 100), std::chrono::seconds(5),
      [&]() -> Result<std::unique_ptr<tessera::cli::ControllerApi>> {
        return std::unique_ptr<tessera::cli::ControllerApi>(new FallbackApi(&fallback_calls));
      });
  REQUIRE(second.ok());
  REQUIRE((*second)->Ping(tessera::v1::PingRequest()).ok());  // refused there, run by the fallback
  CHECK(fallback_calls == 1);
  CHECK(s.svc.Calls() == 1);
  CHECK((*second)->Target() == "fallback");
  // Another uid is not held back by uid 1000's connections.
  auto other = tessera::cli::LocalControllerApi::ConnectTcp(
      "127.0.0.1", s.server->Port(), std::make_unique<FakeMunge>(1001, 100), std::chrono::seconds(5));
  REQUIRE(other.ok());
  REQUIRE((*other)->Ping(tessera::v1::PingRequest()).ok());
  CHECK(s.svc.Calls() == 2);
}

TEST_CASE("wire: the commands take gRPC when the port is closed, not configured, or with TLS") {
  // A port nothing listens on: bind one, note it, close it.
  uint16_t port = 0;
  auto l = tessera::rpc::wire::ListenTcp("127.0.0.1", 0, &port);
  REQUIRE(l.ok());
  close(*l);
  tessera::ClusterConfig cfg;
  cfg.ctld_addr = "127.0.0.1";
  int fallback_calls = 0;
  auto fallback = [&]() -> Result<std::unique_ptr<tessera::cli::ControllerApi>> {
    return std::unique_ptr<tessera::cli::ControllerApi>(new FallbackApi(&fallback_calls));
  };
  auto closed = tessera::cli::ConnectWire(cfg, port, fallback);
  REQUIRE_FALSE(closed.ok());
  CHECK(closed.status().code() == Code::kUnavailable);  // RunMain then makes the gRPC client
  CHECK_THAT(closed.status().message(), Catch::Contains("127.0.0.1:" + std::to_string(port)));
  CHECK(tessera::cli::ConnectWire(cfg, 0, fallback).status().code() == Code::kUnavailable);
  // With the port open, it connects; with TLS configured it is never used.
  Served s;
  CHECK(tessera::cli::ConnectWire(cfg, s.server->Port(), fallback).ok());
  cfg.tls_cert = cfg.tls_key = cfg.tls_ca = "/etc/tessera/tls/x";
  CHECK(tessera::cli::ConnectWire(cfg, s.server->Port(), fallback).status().code() ==
        Code::kUnavailable);
  CHECK(fallback_calls == 0);  // nothing ran twice, nothing ran on the fallback
}

TEST_CASE("wire: ctld stopping mid-command sends the next call to gRPC, run once") {
  int fallback_calls = 0;
  auto fallback = [&]() -> Result<std::unique_ptr<tessera::cli::ControllerApi>> {
    return std::unique_ptr<tessera::cli::ControllerApi>(new FallbackApi(&fallback_calls));
  };
  auto s = std::make_unique<Served>();
  auto api = tessera::cli::LocalControllerApi::ConnectTcp(
      "127.0.0.1", s->server->Port(), std::make_unique<FakeMunge>(), std::chrono::seconds(5), fallback);
  REQUIRE(api.ok());
  REQUIRE((*api)->Ping(tessera::v1::PingRequest()).ok());
  s.reset();  // closes the connection and the port
  REQUIRE((*api)->Ping(tessera::v1::PingRequest()).ok());
  CHECK(fallback_calls == 1);
}
