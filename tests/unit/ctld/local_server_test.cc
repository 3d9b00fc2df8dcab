// LocalServer with a recording service: calls arrive with the kernel's identity of the caller; a
// worker thread serves one connection after another; connections open at once get their own.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "ctld/rpc/local_server.h"
#include "rpc/local_wire.h"
#include "test_util.h"

namespace {

namespace wire = tessera::rpc::local;
using tessera::ctld::rpc::LocalCallContext;
using tessera::ctld::rpc::LocalServer;

class RecordingService final : public tessera::v1::Controller::Service {
 public:
  grpc::Status Ping(grpc::ServerContext* ctx, const tessera::v1::PingRequest*,
                    tessera::v1::PingResponse*) override {
    auto* local = dynamic_cast<LocalCallContext*>(ctx);
    std::lock_guard<std::mutex> l(mu);
    threads.insert(std::this_thread::get_id());
    uids.insert(local ? local->uid() : ~0u);
    return grpc::Status::OK;
  }
  std::mutex mu;
  std::set<std::thread::id> threads;
  std::set<uint32_t> uids;
};

bool WaitIdle(LocalServer& s, int n) {
  for (int i = 0; i < 500; ++i) {
    if (s.IdleWorkers() == n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void Ping(int fd) {
  auto r = wire::Call(fd, "Ping", tessera::v1::PingRequest().SerializeAsString());
  REQUIRE(r.ok());
}

}  // namespace

TEST_CASE("local socket: a worker serves connection after connection; open ones get their own") {
  TempDir d;
  std::string path = d.path + "/ctld.sock";
  RecordingService svc;
  auto server = LocalServer::Start(path, &svc);
  REQUIRE(server.ok());
  for (int i = 0; i < 5; ++i) {  // one command after another, as a shell loop of tbatch
    auto fd = wire::Connect(path, 5000);
    REQUIRE(fd.ok());
    Ping(*fd);
    close(*fd);
    REQUIRE(WaitIdle(**server, 1));
  }
  CHECK(svc.threads.size() == 1);
  CHECK(svc.uids == std::set<uint32_t>{static_cast<uint32_t>(getuid())});
  std::vector<int> open;
  for (int i = 0; i < 3; ++i) {  // three commands at once: each keeps its worker busy
    auto fd = wire::Connect(path, 5000);
    REQUIRE(fd.ok());
    Ping(*fd);
    open.push_back(*fd);
  }
  CHECK(svc.threads.size() == 3);  // the idle worker and two new ones
  CHECK((**server).IdleWorkers() == 0);
  for (int fd : open) close(fd);
  REQUIRE(WaitIdle(**server, 3));
  server->reset();  // stops with idle workers waiting: they exit and are waited for
}
