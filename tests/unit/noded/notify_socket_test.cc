// The stepd -> noded wake-up socket: more senders than the kernel's datagram queue holds
// (net.unix.max_dgram_qlen, often 10) all get through once the receiver reads; one receive takes
// every queued datagram.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "noded/notify_socket.h"
#include "tests/unit/noded/test_util.h"

using namespace tessera;
using namespace tessera::noded;

TEST_CASE("SendNotify waits for room instead of dropping a wake-up") {
  tessera::noded::testing::ScratchDir dir;
  std::string path = dir.path() + "/noded.sock";
  auto fd = BindNotifySocket(path);
  REQUIRE(fd.ok());
  constexpr int kSenders = 40;
  std::vector<std::thread> senders;
  std::vector<int> failed(kSenders, 0);
  for (int i = 0; i < kSenders; ++i)
    senders.emplace_back([&, i] { failed[i] = SendNotify(path, 100 + i).ok() ? 0 : 1; });
  std::vector<uint64_t> got;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the queue fill up
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (got.size() < kSenders && std::chrono::steady_clock::now() < deadline)
    for (uint64_t id : ReceiveNotify(*fd, 100)) got.push_back(id);
  for (auto& t : senders) t.join();
  ::close(*fd);
  CHECK(std::count(failed.begin(), failed.end(), 1) == 0);
  std::sort(got.begin(), got.end());
  std::vector<uint64_t> want;
  for (int i = 0; i < kSenders; ++i) want.push_back(100 + i);
  CHECK(got == want);
}

TEST_CASE("SendNotify fails when nobody listens; ReceiveNotify times out empty") {
  tessera::noded::testing::ScratchDir dir;
  std::string path = dir.path() + "/noded.sock";
  CHECK(!SendNotify(path, 7).ok());
  auto fd = BindNotifySocket(path);
  REQUIRE(fd.ok());
  CHECK(ReceiveNotify(*fd, 10).empty());
  REQUIRE(SendNotify(path, 7).ok());
  REQUIRE(SendNotify(path, 8).ok());
  CHECK(ReceiveNotify(*fd, 1000) == std::vector<uint64_t>{7, 8});
  ::close(*fd);
}
