#pragma once
// tessera-ctld's Prometheus metrics (issue 20 §3): counters and histograms recorded where things
// happen, and state gauges (jobs, nodes, GPUs) computed at scrape time (state_gauges.h).
//
// Threads: the Job* and Cycle methods are for the core thread only (LabeledCounters caches);
// Rpc, StoreCommit and the histograms are thread-safe (prometheus-cpp's own locking).
// Names follow Prometheus's conventions: tessera_ prefix, _total counters, _seconds histograms.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "common/metrics/families.h"

namespace tessera::ctld::metrics {

class CtldMetrics {
 public:
  CtldMetrics();
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // Core thread.
  void JobSubmitted(std::string_view partition) { submitted_.Get(partition).Increment(); }
  void JobStarted(std::string_view partition) { started_.Get(partition).Increment(); }
  void JobFinished(std::string_view partition, std::string_view state) {
    finished_.Get(partition, state).Increment();
  }
  // Any thread (the job manager's event listener).
  void JobRequeued() { requeued_.Increment(); }
  // One scheduling cycle: its wall time, the pending jobs it considered, the jobs it started
  // and backfilled.
  void Cycle(int64_t wall_us, uint64_t considered, uint64_t started, uint64_t backfilled);

  // Any thread: one RPC handler's time, by method and the caller's role (admin, operator, user,
  // node, unauthenticated).
  prometheus::Histogram& RpcHistogram(const std::string& method, const std::string& role);
  // Writer thread of the store: one SQLite transaction's time and the batches it committed.
  void StoreCommit(int64_t us, size_t batches);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  tessera::metrics::LabeledCounters submitted_, started_, finished_;
  prometheus::Counter& requeued_;
  prometheus::Histogram& cycle_seconds_;
  prometheus::Histogram& cycle_considered_;
  prometheus::Counter& cycle_started_;
  prometheus::Counter& cycle_backfilled_;
  prometheus::Family<prometheus::Histogram>& rpc_family_;
  prometheus::Histogram& commit_seconds_;
  prometheus::Histogram& commit_batches_;
};

}  // namespace tessera::ctld::metrics
