#pragma once
// Helpers over prometheus-cpp (issue 20 §3):
//  - LabeledCounters: a counter family with a cache of its children by label values, so a hot
//    path pays one hash lookup and an atomic add per increment (prometheus-cpp's Family::Add
//    takes a lock and hashes every label). NOT thread-safe: one owner thread (ctld's core).
//  - GaugeFamily: a gauge MetricFamily built at scrape time from label values -> value.
//  - CallbackCollectable: a Collectable whose Collect() calls a function (scrape-time gauges).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

namespace tessera::metrics {

class LabeledCounters {
 public:
  // Registers `name` in `registry` with the label names `labels`.
  LabeledCounters(prometheus::Registry& registry, const std::string& name, const std::string& help,
                  std::vector<std::string> labels);
  // The child for these label values (one per label name, in order); created on first use.
  prometheus::Counter& Get(std::string_view a) { return Get(a, {}); }
  prometheus::Counter& Get(std::string_view a, std::string_view b);

 private:
  prometheus::Family<prometheus::Counter>* family_;
  std::vector<std::string> labels_;
  std::unordered_map<std::string, prometheus::Counter*> children_;  // values joined by '\0'
};

// label values (in the order of `labels`) -> value.
using GaugeRows = std::map<std::vector<std::string>, double>;
prometheus::MetricFamily GaugeFamily(const std::string& name, const std::string& help,
                                     const std::vector<std::string>& labels, const GaugeRows& rows);

class CallbackCollectable final : public prometheus::Collectable {
 public:
  explicit CallbackCollectable(std::function<std::vector<prometheus::MetricFamily>()> f)
      : f_(std::move(f)) {}
  std::vector<prometheus::MetricFamily> Collect() const override { return f_(); }

 private:
  std::function<std::vector<prometheus::MetricFamily>()> f_;
};

// Seconds buckets for latencies from 50 us to 10 s.
std::vector<double> LatencyBuckets();

}  // namespace tessera::metrics
