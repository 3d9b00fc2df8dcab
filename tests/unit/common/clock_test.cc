// FakeClock moves only when told to; SystemClock is monotonic.
#include "common/clock.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

namespace tessera {
namespace {

TEST_CASE("clock: FakeClock moves only when told", "[clock]") {
  FakeClock c(1000);
  const Clock& as_clock = c;
  CHECK(as_clock.Now() == 1000);
  c.Advance(5);
  CHECK(as_clock.Now() == 1005);
  int64_t before = as_clock.MonotonicMicros();
  c.AdvanceMicros(250);
  CHECK(as_clock.MonotonicMicros() - before == 250);
  CHECK(as_clock.Now() == 1005);  // microseconds do not move wall seconds
  c.Set(42);
  CHECK(as_clock.Now() == 42);
}

TEST_CASE("clock: SystemClock is plausible and monotonic", "[clock]") {
  SystemClock c;
  CHECK(c.Now() > 1'600'000'000);
  int64_t a = c.MonotonicMicros();
  int64_t b = c.MonotonicMicros();
  CHECK(b >= a);
}

}  // namespace
}  // namespace tessera

TEST_CASE("SystemClock's thread CPU time counts this thread's work, not sleeping") {
  tessera::SystemClock c;
  int64_t cpu0 = c.ThreadCpuMicros(), wall0 = c.MonotonicMicros();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  int64_t slept_cpu = c.ThreadCpuMicros() - cpu0;
  CHECK(c.MonotonicMicros() - wall0 >= 30000);
  CHECK(slept_cpu < 10000);
  volatile uint64_t x = 0;
  int64_t cpu1 = c.ThreadCpuMicros();
  while (c.ThreadCpuMicros() - cpu1 < 20000) x = x + 1;  // spins 20 ms of CPU
  CHECK(c.ThreadCpuMicros() - cpu1 >= 20000);
}
