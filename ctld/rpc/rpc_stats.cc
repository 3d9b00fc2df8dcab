#include "ctld/rpc/rpc_stats.h"

#include <fstream>

#include <prometheus/histogram.h>

#include "ctld/metrics/ctld_metrics.h"

namespace tessera::ctld::rpc {

namespace {
struct CallerNote {
  uint32_t uid = 0;
  bool known = false;
  const char* role = "unauthenticated";
};
thread_local CallerNote t_caller;
}  // namespace

void NoteCaller(uint32_t uid, const char* role) { t_caller = {uid, true, role}; }

void RpcStats::Add(const char* method, const char* role, uint32_t uid, bool uid_known, int64_t us) {
  uint64_t u = us > 0 ? static_cast<uint64_t>(us) : 0;
  prometheus::Histogram* hist = nullptr;
  {
    std::lock_guard<std::mutex> l(mu_);
    Entry& e = by_method_[{method, role}];
    e.row.count++;
    e.row.total_us += u;
    if (!e.hist && metrics_) e.hist = &metrics_->RpcHistogram(method, role);
    hist = e.hist;
    if (uid_known) {
      Row& r = by_user_[uid];
      r.count++;
      r.total_us += u;
    }
  }
  if (hist) hist->Observe(static_cast<double>(u) / 1e6);
}

std::map<std::string, RpcStats::Row> RpcStats::ByMethod() const {
  std::lock_guard<std::mutex> l(mu_);
  std::map<std::string, Row> out;
  for (const auto& [key, e] : by_method_) {
    if (!e.row.count) continue;  // none since a reset
    Row& r = out[key.first];
    r.count += e.row.count;
    r.total_us += e.row.total_us;
  }
  return out;
}

void RpcStats::Reset() {
  std::lock_guard<std::mutex> l(mu_);
  for (auto& [key, e] : by_method_) e.row = Row{};  // keeps the histogram pointers
  by_user_.clear();
}

std::map<uint32_t, RpcStats::Row> RpcStats::ByUser() const {
  std::lock_guard<std::mutex> l(mu_);
  return {by_user_.begin(), by_user_.end()};
}

uint32_t ProcessThreadCount() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Threads:", 0) == 0) return static_cast<uint32_t>(std::stoul(line.substr(8)));
  return 0;
}

RpcTimer::RpcTimer(RpcStats* s, const char* method)
    : s_(s), method_(method), t0_(std::chrono::steady_clock::now()) {
  t_caller = CallerNote{};
  s_->in_flight_++;
}

RpcTimer::~RpcTimer() {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0_);
  s_->Add(method_, t_caller.role, t_caller.uid, t_caller.known, us.count());
  t_caller = CallerNote{};
  s_->in_flight_--;
}

}  // namespace tessera::ctld::rpc
