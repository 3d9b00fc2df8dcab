#pragma once
// Injectable time source. Production code takes a Clock& and never calls time() itself,
// so tests and tessera-sim can drive time explicitly.
#include <time.h>

#include <chrono>
#include <cstdint>

namespace tessera {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the Unix epoch.
  virtual int64_t Now() const = 0;
  // Monotonic time in microseconds, for measuring durations.
  virtual int64_t MonotonicMicros() const = 0;
  // CPU time of the calling thread in microseconds: what a piece of work cost, whatever else
  // ran on the machine meanwhile. Default: MonotonicMicros().
  virtual int64_t ThreadCpuMicros() const { return MonotonicMicros(); }
};

class SystemClock final : public Clock {
 public:
  int64_t Now() const override {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  int64_t MonotonicMicros() const override {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  int64_t ThreadCpuMicros() const override {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
  }
};

// A clock that only moves when told to.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t now = 1'700'000'000) : now_(now) {}
  int64_t Now() const override { return now_; }
  int64_t MonotonicMicros() const override { return now_ * 1'000'000 + micros_; }
  void Advance(int64_t seconds) { now_ += seconds; }
  void AdvanceMicros(int64_t us) { micros_ += us; }
  void Set(int64_t now) { now_ = now; }

 private:
  int64_t now_;
  int64_t micros_ = 0;
};

}  // namespace tessera
