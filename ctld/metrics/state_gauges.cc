#include "ctld/metrics/state_gauges.h"

#include <algorithm>
#include <string>

#include <prometheus/client_metric.h>
#include <prometheus/metric_type.h>

#include "common/metrics/families.h"
#include "ctld/controller.h"

namespace tessera::ctld::metrics {

namespace {

using tessera::metrics::GaugeFamily;
using tessera::metrics::GaugeRows;

std::string PendingReason(const JobRecord& j) {
  if (!j.reason.empty()) return j.reason;
  return j.held ? "JobHeldUser" : "None";
}

void JobGauges(Controller& ctl, std::vector<prometheus::MetricFamily>* out) {
  GaugeRows pending, running;
  for (const JobRecord* j : ctl.jobs().active()) {
    JobState s = j->State();
    const std::string& part = j->partition;
    std::string account = j->spec.account;
    if (s == JobState::kPending)
      pending[{part, account, PendingReason(*j)}] += 1;
    else if (s == JobState::kRunning || s == JobState::kSuspended)
      running[{part, account}] += 1;
  }
  out->push_back(GaugeFamily("tessera_jobs_pending", "Pending jobs now, by partition, account and reason",
                             {"partition", "account", "reason"}, pending));
  out->push_back(GaugeFamily("tessera_jobs_running", "Running (or suspended) jobs now",
                             {"partition", "account"}, running));
}

// One GPU (or MIG instance): drained beats allocated beats free.
const char* GpuUse(bool drained, bool allocated) {
  return drained ? "drained" : allocated ? "allocated" : "free";
}

void NodeGauges(Controller& ctl, std::vector<prometheus::MetricFamily>* out) {
  GaugeRows nodes, gpus;
  for (auto& [name, n] : ctl.nodes().nodes()) {
    nodes[{n.StateName()}] += 1;
    for (const GpuState& g : n.gpus) {
      bool drained = !g.healthy;
      if (g.mig_enabled && !g.mig.empty()) {
        for (const MigState& m : g.mig) gpus[{g.model, m.profile, GpuUse(drained, m.in_use_by_job != 0)}] += 1;
        continue;
      }
      bool allocated =
          std::find(n.alloc_gpus.begin(), n.alloc_gpus.end(), g.index) != n.alloc_gpus.end() ||
          n.alloc_mps.count(g.index) || n.alloc_shards.count(g.index);
      gpus[{g.model, "", GpuUse(drained, allocated)}] += 1;
    }
  }
  out->push_back(GaugeFamily("tessera_nodes", "Nodes now, by state", {"state"}, nodes));
  out->push_back(GaugeFamily("tessera_gpus",
                             "GPUs (whole) and MIG instances now, by model, MIG profile and use",
                             {"model", "mig_profile", "state"}, gpus));
}

prometheus::MetricFamily Scalar(const std::string& name, const std::string& help,
                                prometheus::MetricType type, double v) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) m.counter.value = v;
  else m.gauge.value = v;
  f.metric.push_back(m);
  return f;
}

}  // namespace

std::vector<prometheus::MetricFamily> StateGauges(Controller& ctl) {
  std::vector<prometheus::MetricFamily> out;
  JobGauges(ctl, &out);
  NodeGauges(ctl, &out);
  out.push_back(Scalar("tessera_ctld_start_time_seconds", "When this tessera-ctld started (Unix seconds)",
                       prometheus::MetricType::Gauge, static_cast<double>(ctl.stats().start_time)));
  return out;
}

}  // namespace tessera::ctld::metrics
