#include "noded/noded_metrics.h"

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>

#include "common/metrics/families.h"

namespace tessera::noded {

namespace {

prometheus::MetricFamily Family(const char* name, const char* help, prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

void AddSample(prometheus::MetricFamily* f, double v, std::vector<prometheus::ClientMetric::Label> labels = {}) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  if (f->type == prometheus::MetricType::Counter) m.counter.value = v;
  else m.gauge.value = v;
  f->metric.push_back(std::move(m));
}

}  // namespace

std::shared_ptr<prometheus::Collectable> NodedCollectable(const JobManager& jobs,
                                                          const ZygoteStepdControl::Counts& stepd) {
  using prometheus::MetricType;
  return std::make_shared<tessera::metrics::CallbackCollectable>([&jobs, &stepd] {
    std::vector<prometheus::MetricFamily> out;
    auto launches = Family("tessera_noded_job_launches_total",
                           "Job launches that started a tessera-stepd on this node", MetricType::Counter);
    AddSample(&launches, static_cast<double>(jobs.launches()));
    auto failures = Family("tessera_noded_job_launch_failures_total",
                           "Job launches that failed on this node (the job ends FAILED)", MetricType::Counter);
    AddSample(&failures, static_cast<double>(jobs.launch_failures()));
    auto running = Family("tessera_noded_jobs_running", "Jobs running on this node now", MetricType::Gauge);
    AddSample(&running, static_cast<double>(jobs.running_now()));
    auto starts = Family("tessera_noded_stepd_starts_total",
                         "Jobs handed to a tessera-stepd, by method: reused (an idle stepd took it), "
                         "fork (the zygote forked a new one), exec (the fallback)",
                         MetricType::Counter);
    AddSample(&starts, static_cast<double>(stepd.reused.load()), {{"method", "reused"}});
    AddSample(&starts, static_cast<double>(stepd.forks.load()), {{"method", "fork"}});
    AddSample(&starts, static_cast<double>(stepd.execs.load()), {{"method", "exec"}});
    auto spawns = Family("tessera_noded_stepd_zygote_spawns_total",
                         "tessera-stepd zygotes started (1 unless one died)", MetricType::Counter);
    AddSample(&spawns, static_cast<double>(stepd.zygote_spawns.load()));
    out = {launches, failures, running, starts, spawns};
    return out;
  });
}

}  // namespace tessera::noded
