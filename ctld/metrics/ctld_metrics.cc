#include "ctld/metrics/ctld_metrics.h"

#include <prometheus/counter.h>

namespace tessera::ctld::metrics {

namespace {

prometheus::Histogram& Histogram(prometheus::Registry& r, const std::string& name,
                                 const std::string& help, std::vector<double> buckets) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(r).Add({}, std::move(buckets));
}

prometheus::Counter& Counter(prometheus::Registry& r, const std::string& name, const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r).Add({});
}

std::vector<double> CountBuckets() {
  return {0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000};
}

}  // namespace

CtldMetrics::CtldMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      submitted_(*registry_, "tessera_jobs_submitted_total", "Jobs accepted by the controller",
                 {"partition"}),
      started_(*registry_, "tessera_jobs_started_total", "Jobs the scheduler started", {"partition"}),
      finished_(*registry_, "tessera_jobs_finished_total",
                "Jobs that ended, by final state (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...)",
                {"partition", "state"}),
      requeued_(Counter(*registry_, "tessera_jobs_requeued_total",
                        "Jobs put back into the queue (requeue, node failure, preemption, GPU failure)")),
      cycle_seconds_(Histogram(*registry_, "tessera_sched_cycle_seconds",
                               "Wall time of one scheduling cycle (snapshot, decide, apply)",
                               tessera::metrics::LatencyBuckets())),
      cycle_considered_(Histogram(*registry_, "tessera_sched_cycle_jobs_considered",
                                  "Pending jobs one scheduling cycle considered", CountBuckets())),
      cycle_started_(Counter(*registry_, "tessera_sched_jobs_started_total",
                             "Jobs started by scheduling cycles")),
      cycle_backfilled_(Counter(*registry_, "tessera_sched_jobs_backfilled_total",
                                "Jobs started by backfill (ahead of a higher-priority job)")),
      rpc_family_(prometheus::BuildHistogram()
                      .Name("tessera_rpc_duration_seconds")
                      .Help("Time in the controller's RPC handlers, by method and caller role")
                      .Register(*registry_)),
      commit_seconds_(Histogram(*registry_, "tessera_store_commit_seconds",
                                "Time of one SQLite transaction of the state store (fsync included)",
                                tessera::metrics::LatencyBuckets())),
      commit_batches_(Histogram(*registry_, "tessera_store_commit_batch_size",
                                "Changes (batches) committed by one SQLite transaction",
                                CountBuckets())) {}

void CtldMetrics::Cycle(int64_t wall_us, uint64_t considered, uint64_t started, uint64_t backfilled) {
  cycle_seconds_.Observe(static_cast<double>(wall_us) / 1e6);
  cycle_considered_.Observe(static_cast<double>(considered));
  if (started) cycle_started_.Increment(static_cast<double>(started));
  if (backfilled) cycle_backfilled_.Increment(static_cast<double>(backfilled));
}

prometheus::Histogram& CtldMetrics::RpcHistogram(const std::string& method, const std::string& role) {
  // Family::Add returns the existing child for known labels (under prometheus-cpp's lock).
  return rpc_family_.Add({{"method", method}, {"role", role}}, tessera::metrics::LatencyBuckets());
}

void CtldMetrics::StoreCommit(int64_t us, size_t batches) {
  commit_seconds_.Observe(static_cast<double>(us) / 1e6);
  commit_batches_.Observe(static_cast<double>(batches));
}

}  // namespace tessera::ctld::metrics
