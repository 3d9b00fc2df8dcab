// The local socket's limits against hostile local clients (hardening issue, part 2): the frame
// reader's bound and incremental buffer, the per-uid cap with a reserve for root, refusal frames
// and the command's fallback, and the idle and slow-sender timeouts.
#include <catch2/catch.hpp>

#include <malloc.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cli/lib/local_controller_api.h"
#include "ctld/rpc/local_server.h"
#include "fallback_api.h"
#include "rpc/local_wire.h"
#include "test_util.h"

namespace {

namespace wire = tessera::rpc::local;
using tessera::testing::FallbackApi;
using tessera::Code;
using tessera::ctld::rpc::LocalServer;
using tessera::ctld::rpc::LocalServerLimits;

class PingService final : public tessera::v1::Controller::Service {
 public:
  grpc::Status Ping(grpc::ServerContext*, const tessera::v1::PingRequest*,
                    tessera::v1::PingResponse*) override {
    return grpc::Status::OK;
  }
};

std::string Header(uint32_t n) {
  std::string h(4, '\0');
  for (int i = 0; i < 4; ++i) h[i] = static_cast<char>(n >> (8 * i));
  return h;
}

void WriteAll(int fd, const std::string& s) {
  REQUIRE(send(fd, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size()));
}

// Bytes of heap in use (malloc'd and mmap'd) by the whole process.
size_t HeapInUse() {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

bool WaitFor(const std::function<bool()>& cond) {
  for (int i = 0; i < 1000; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Waits (up to 5 s, the socket's receive timeout) for the server to close the connection:
// true when it did (read gives 0, or a reset), false when the timeout passed with it open.
bool ClosedByServer(int fd) {
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char b[256];
  while (true) {
    ssize_t r = read(fd, b, sizeof b);
    if (r == 0 || (r < 0 && errno == ECONNRESET)) return true;
    if (r < 0) return false;
  }
}

bool Pings(int fd) {
  return wire::Call(fd, "Ping", tessera::v1::PingRequest().SerializeAsString()).ok();
}

}  // namespace

TEST_CASE("local wire: a header over the request bound is refused before any allocation") {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  WriteAll(sv[1], Header(256u << 20) + "x");  // the old bound, now over it
  size_t cap = 1;
  auto r = wire::ReadFrame(sv[0], wire::kMaxRequestFrame, {}, &cap);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kDataLoss);
  CHECK_THAT(r.status().message(), Catch::Contains("over the limit of 67108864 bytes"));
  CHECK(cap == 1);  // not even reached the buffer
  close(sv[0]);
  close(sv[1]);
}

TEST_CASE("local wire: a big announced frame holds only the bytes that arrived") {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  const uint32_t announced = 60u << 20;
  const size_t sent = 100 << 10;
  size_t before = HeapInUse();
  size_t cap = 0;
  tessera::Status status;
  std::thread reader([&] {
    auto r = wire::ReadFrame(sv[0], wire::kMaxRequestFrame, {}, &cap);
    status = r.status();
  });
  WriteAll(sv[1], Header(announced) + std::string(sent, 'x'));
  // The reader has taken every byte and waits for more: measure what it holds now.
  REQUIRE(WaitFor([&] {
    int queued = -1;
    return ioctl(sv[0], FIONREAD, &queued) == 0 && queued == 0;
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past the append of the last chunk
  size_t during = HeapInUse();
  close(sv[1]);
  reader.join();
  CHECK(status.code() == Code::kDataLoss);
  CHECK(cap <= 2 * sent + wire::kReadChunk);
  CHECK(during < before + 4 * sent + (1 << 20));  // the old reader held 60 MiB here
  close(sv[0]);
}

TEST_CASE("local wire: deadlines close an idle connection and a slow sender") {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  auto idle = wire::ReadFrame(sv[0], wire::kMaxRequestFrame, {100, 200});
  CHECK(idle.status().code() == Code::kNotFound);  // no frame started: a quiet close
  WriteAll(sv[1], Header(1000) + "abc");
  auto slow = wire::ReadFrame(sv[0], wire::kMaxRequestFrame, {100, 200});
  CHECK(slow.status().code() == Code::kDeadlineExceeded);
  close(sv[0]);
  close(sv[1]);
}

TEST_CASE("local socket: a uid over its cap gets a refusal frame; a closed slot is reusable") {
  TempDir d;
  std::string path = d.path + "/ctld.sock";
  PingService svc;
  LocalServerLimits limits;
  limits.per_uid = 3;
  limits.privileged = {};  // this test's uid (root when run as root) is an ordinary user here
  auto server = LocalServer::Start(path, &svc, limits);
  REQUIRE(server.ok());
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) {
    auto fd = wire::Connect(path, 5000);
    REQUIRE(fd.ok());
    CHECK(Pings(*fd));
    held.push_back(*fd);
  }
  auto extra = wire::Connect(path, 5000);  // the kernel accepts; ctld refuses
  REQUIRE(extra.ok());
  bool not_run = false;
  auto r = wire::Call(*extra, "Ping", tessera::v1::PingRequest().SerializeAsString(), &not_run);
  REQUIRE_FALSE(r.ok());
  CHECK(not_run);
  CHECK(r.status().code() == Code::kResourceExhausted);
  CHECK(r.status().message() == "too many connections from uid " + std::to_string(getuid()) +
                                    " on the controller's local socket (at most 3 at once)");
  close(*extra);
  close(held.back());
  held.pop_back();
  REQUIRE(WaitFor([&] { return (**server).OpenConnections() == 2; }));
  auto again = wire::Connect(path, 5000);
  REQUIRE(again.ok());
  CHECK(Pings(*again));
  close(*again);
  for (int fd : held) close(fd);
}

TEST_CASE("local socket: root is served while a user holds its cap and the users' share") {
  if (getuid() != 0) {
    WARN("needs root (a child becomes uid 65534)");
    return;
  }
  TempDir d;
  chmod(d.path.c_str(), 0755);
  std::string path = d.path + "/ctld.sock";
  int go[2], done[2], end[2];
  REQUIRE(pipe(go) == 0);
  REQUIRE(pipe(done) == 0);
  REQUIRE(pipe(end) == 0);
  pid_t child = fork();  // before the server's threads exist
  REQUIRE(child >= 0);
  if (child == 0) {  // the user: 2 connections served, the third refused
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    char c;
    if (read(go[0], &c, 1) != 1) _exit(11);
    int served = 0, refused = 0;
    for (int i = 0; i < 3; ++i) {
      auto fd = wire::Connect(path, 5000);
      if (!fd.ok()) _exit(12);
      bool not_run = false;
      auto r = wire::Call(*fd, "Ping", tessera::v1::PingRequest().SerializeAsString(), &not_run);
      served += r.ok();
      refused += !r.ok() && not_run && r.status().code() == Code::kResourceExhausted;
    }
    char report[2] = {static_cast<char>(served), static_cast<char>(refused)};
    if (write(done[1], report, 2) != 2) _exit(13);
    if (read(end[0], &c, 1) != 1) _exit(14);  // holds its connections until then
    _exit(0);
  }
  PingService svc;
  LocalServerLimits limits;
  limits.per_uid = 2;
  limits.total = 4;
  limits.privileged_reserve = 2;
  limits.privileged = {0};
  auto server = LocalServer::Start(path, &svc, limits);
  REQUIRE(server.ok());
  REQUIRE(write(go[1], "g", 1) == 1);
  char report[2] = {0, 0};
  REQUIRE(read(done[0], report, 2) == 2);
  CHECK(report[0] == 2);
  CHECK(report[1] == 1);
  std::vector<int> root;
  for (int i = 0; i < 2; ++i) {  // the reserve: served although users hold their whole share
    auto fd = wire::Connect(path, 5000);
    REQUIRE(fd.ok());
    CHECK(Pings(*fd));
    root.push_back(*fd);
  }
  auto full = wire::Connect(path, 5000);  // total reached: even root is refused, clearly
  REQUIRE(full.ok());
  auto r = wire::Call(*full, "Ping", tessera::v1::PingRequest().SerializeAsString());
  CHECK(r.status().code() == Code::kResourceExhausted);
  CHECK_THAT(r.status().message(), Catch::Contains("local socket is full (4 connections)"));
  close(*full);
  REQUIRE(write(end[1], "e", 1) == 1);
  int st = 0;
  REQUIRE(waitpid(child, &st, 0) == child);
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 0);
  for (int fd : root) close(fd);
  for (int fd : {go[0], go[1], done[0], done[1], end[0], end[1]}) close(fd);
}

TEST_CASE("local socket: idle connections and slow senders are closed") {
  TempDir d;
  std::string path = d.path + "/ctld.sock";
  PingService svc;
  LocalServerLimits limits;
  limits.idle_ms = 200;
  limits.frame_ms = 300;
  auto server = LocalServer::Start(path, &svc, limits);
  REQUIRE(server.ok());
  auto idle = wire::Connect(path, 5000);
  REQUIRE(idle.ok());
  CHECK(Pings(*idle));
  CHECK(ClosedByServer(*idle));  // the old server waited 60 s
  close(*idle);
  auto slow = wire::Connect(path, 5000);  // a header, then a byte every 100 ms: still cut
  REQUIRE(slow.ok());
  WriteAll(*slow, Header(100) + "a");
  bool cut = false;
  for (int i = 0; i < 50 && !cut; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cut = send(*slow, "b", 1, MSG_NOSIGNAL) != 1;
  }
  CHECK(cut);
  close(*slow);
  REQUIRE(WaitFor([&] { return (**server).OpenConnections() == 0; }));
}

TEST_CASE("local socket: a client that never reads its answer does not kill ctld (SIGPIPE)") {
  TempDir d;
  std::string path = d.path + "/ctld.sock";
  PingService svc;
  auto server = LocalServer::Start(path, &svc);
  REQUIRE(server.ok());
  for (int i = 0; i < 20; ++i) {
    auto fd = wire::Connect(path, 5000);
    REQUIRE(fd.ok());
    REQUIRE(wire::WriteFrame(*fd, wire::RequestHead("Ping"), "").ok());
    close(*fd);  // the answer goes to a closed socket
  }
  auto fd = wire::Connect(path, 5000);
  REQUIRE(fd.ok());
  CHECK(Pings(*fd));  // still here (a SIGPIPE would have ended the test process)
  close(*fd);
}

TEST_CASE("local controller api: a connection ctld closed while idle is reopened") {
  TempDir d;
  std::string path = d.path + "/ctld.sock";
  PingService svc;
  LocalServerLimits limits;
  limits.idle_ms = 200;
  auto server = LocalServer::Start(path, &svc, limits);
  REQUIRE(server.ok());
  auto api = tessera::cli::LocalControllerApi::Connect(path, std::chrono::seconds(5));
  REQUIRE(api.ok());
  REQUIRE((*api)->Ping(tessera::cli::pb::PingRequest()).ok());
  REQUIRE(WaitFor([&] { return (**server).OpenConnections() == 0; }));
  auto r = (*api)->Ping(tessera::cli::pb::PingRequest());  // as `tqueue -i` after its sleep
  INFO(r.status().ToString());
  CHECK(r.ok());
}

TEST_CASE("local controller api: a refused call goes to the fallback, and the later ones") {
  TempDir d;
  std::string path = d.path + "/ctld.sock";
  PingService svc;
  LocalServerLimits limits;
  limits.per_uid = 1;
  limits.privileged = {};
  auto server = LocalServer::Start(path, &svc, limits);
  REQUIRE(server.ok());
  int fallback_calls = 0;
  auto fallback = [&]() -> tessera::Result<std::unique_ptr<tessera::cli::ControllerApi>> {
    return std::unique_ptr<tessera::cli::ControllerApi>(new FallbackApi(&fallback_calls));
  };
  auto holder = wire::Connect(path, 5000);  // this uid's one connection
  REQUIRE(holder.ok());
  REQUIRE(Pings(*holder));
  auto api = tessera::cli::LocalControllerApi::Connect(path, std::chrono::seconds(5), fallback);
  REQUIRE(api.ok());
  REQUIRE((*api)->Ping(tessera::cli::pb::PingRequest()).ok());
  CHECK(fallback_calls == 1);
  CHECK((*api)->Target() == "fallback");
  REQUIRE((*api)->ListJobs(tessera::cli::pb::ListJobsRequest()).ok());
  CHECK(fallback_calls == 2);
  // Without a fallback the refusal is the call's error.
  auto bare = tessera::cli::LocalControllerApi::Connect(path, std::chrono::seconds(5));
  REQUIRE(bare.ok());
  auto r = (*bare)->Ping(tessera::cli::pb::PingRequest());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kResourceExhausted);
  CHECK_THAT(r.status().message(), Catch::Contains("too many connections from uid"));
  close(*holder);
}
