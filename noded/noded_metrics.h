#pragma once
// tessera-noded's Prometheus metrics (issue 20 §3), read at scrape time from counters the job
// manager and the stepd starter keep (atomics: the endpoint's threads read them):
//   tessera_noded_job_launches_total, tessera_noded_job_launch_failures_total,
//   tessera_noded_jobs_running, tessera_noded_stepd_starts_total{method="reused"|"fork"|"exec"}
//   (stepd reuse: jobs taken by an idle stepd, by one the zygote forked, by an exec'd one), and
//   tessera_noded_stepd_zygote_spawns_total.
#include <memory>

#include <prometheus/collectable.h>

#include "noded/job_manager.h"
#include "noded/stepd_control.h"

namespace tessera::noded {

// The collectable for MetricsServer; `jobs` and `stepd` must outlive it.
std::shared_ptr<prometheus::Collectable> NodedCollectable(const JobManager& jobs,
                                                          const ZygoteStepdControl::Counts& stepd);

}  // namespace tessera::noded
