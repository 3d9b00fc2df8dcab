#pragma once
// Scrape-time gauges of the controller's state (issue 20 §3), read on the core thread:
//   tessera_jobs_pending{partition, account, reason}, tessera_jobs_running{partition, account},
//   tessera_nodes{state} (IDLE, MIXED, ALLOCATED, DOWN, DRAINED, ...),
//   tessera_gpus{model, mig_profile, state} (allocated, free, drained; a MIG GPU counts its
//   instances, mig_profile "" for a whole GPU),
//   tessera_ctld_start_time_seconds.
// Computing them at scrape time keeps the submit and cycle paths free of gauge updates.
#include <vector>

#include <prometheus/metric_family.h>

namespace tessera::ctld {
class Controller;
}

namespace tessera::ctld::metrics {

// Core thread (it walks the job and node tables).
std::vector<prometheus::MetricFamily> StateGauges(Controller& ctl);

}  // namespace tessera::ctld::metrics
