#include "common/metrics/families.h"

#include <prometheus/client_metric.h>
#include <prometheus/metric_type.h>

namespace tessera::metrics {

LabeledCounters::LabeledCounters(prometheus::Registry& registry, const std::string& name,
                                 const std::string& help, std::vector<std::string> labels)
    : family_(&prometheus::BuildCounter().Name(name).Help(help).Register(registry)),
      labels_(std::move(labels)) {}

prometheus::Counter& LabeledCounters::Get(std::string_view a, std::string_view b) {
  std::string key;  // short label values stay in the small-string buffer: no allocation
  key.reserve(a.size() + 1 + b.size());
  key.append(a).push_back('\0');
  key.append(b);
  auto it = children_.find(key);
  if (it != children_.end()) return *it->second;
  prometheus::Labels l;
  std::string_view values[2] = {a, b};
  for (size_t i = 0; i < labels_.size() && i < 2; ++i) l[labels_[i]] = std::string(values[i]);
  prometheus::Counter* c = &family_->Add(l);
  children_.emplace(std::move(key), c);
  return *c;
}

prometheus::MetricFamily GaugeFamily(const std::string& name, const std::string& help,
                                     const std::vector<std::string>& labels, const GaugeRows& rows) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = prometheus::MetricType::Gauge;
  for (const auto& [values, v] : rows) {
    prometheus::ClientMetric m;
    for (size_t i = 0; i < labels.size() && i < values.size(); ++i)
      m.label.push_back({labels[i], values[i]});
    m.gauge.value = v;
    f.metric.push_back(std::move(m));
  }
  return f;
}

std::vector<double> LatencyBuckets() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
          0.025,   0.05,   0.1,     0.25,   0.5,   1,     2.5,    5,     10};
}

}  // namespace tessera::metrics
