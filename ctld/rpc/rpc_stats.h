#pragma once
// Per-method and per-user RPC counts and times (sdiag's "Remote Procedure Call statistics") and
// the Prometheus histogram tessera_rpc_duration_seconds{method, role} (issue 20 §3).
//
// RpcTimer times one handler; the handler's authentication (ControllerService::Check) names the
// caller with NoteCaller on the same thread, and the timer's end books the call under it.
// Thread-safe; one short lock per call (the same as before the histograms), and the histogram
// observation outside it.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace prometheus {
class Histogram;
}

namespace tessera::ctld::metrics {
class CtldMetrics;
}

namespace tessera::ctld::rpc {

class RpcStats {
 public:
  struct Row {
    uint64_t count = 0;
    uint64_t total_us = 0;
  };
  // Before the first call; null = no histograms.
  void SetMetrics(metrics::CtldMetrics* m) { metrics_ = m; }
  // `method` and `role` are string literals (their addresses key the table). `uid` counts only
  // when `uid_known`.
  void Add(const char* method, const char* role, uint32_t uid, bool uid_known, int64_t us);
  std::map<std::string, Row> ByMethod() const;
  std::map<uint32_t, Row> ByUser() const;
  // Issue 20 §3 (sdiag): handlers running now (RpcTimers alive), Slurm's "Server thread count";
  // and sdiag --reset, which empties both tables (histograms keep counting).
  uint32_t InFlight() const { return in_flight_.load(); }
  void Reset();

 private:
  struct Entry {
    Row row;
    prometheus::Histogram* hist = nullptr;
  };
  metrics::CtldMetrics* metrics_ = nullptr;
  mutable std::mutex mu_;
  std::map<std::pair<const char*, const char*>, Entry> by_method_;
  std::unordered_map<uint32_t, Row> by_user_;
  std::atomic<uint32_t> in_flight_{0};
  friend class RpcTimer;
};

// Threads of this process now (/proc/self/status), sdiag's "Server thread count"; 0 if unknown.
uint32_t ProcessThreadCount();

// The authenticated caller of the handler running on this thread (set by Check).
void NoteCaller(uint32_t uid, const char* role);

// Times one handler invocation into RpcStats, under the caller NoteCaller named meanwhile
// ("unauthenticated" when none).
class RpcTimer {
 public:
  RpcTimer(RpcStats* s, const char* method);
  ~RpcTimer();

 private:
  RpcStats* s_;
  const char* method_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace tessera::ctld::rpc
