// priority, fifo, gang and nodeorder: the plugins that order jobs, judge gangs and score nodes.
#include <algorithm>

#include "ctld/sched/plugins/plugins.h"
#include "ctld/sched/priority.h"
#include "ctld/sched/session.h"

namespace tessera::sched {
namespace {

// Multifactor priority; job order: higher priority first.
class PriorityPlugin : public Plugin {
 public:
  explicit PriorityPlugin(const SchedConfig&) {}
  std::string Name() const override { return "priority"; }
  void OnSessionOpen(Session& s) override {
    PriorityContext ctx = MakePriorityContext(s.snapshot(), s.config());
    for (auto& j : s.jobs()) {
      uint32_t tier = j.partition >= 0 ? s.state().Partition(j.partition).priority_tier : 1;
      j.priority = MultifactorPriority(*j.snap, j.total.cpus, j.total.gpus, tier, s.config(), ctx,
                                       j.time_limit);
      s.decision(j).priority = j.priority;
    }
    s.AddJobOrder([](const JobInfo& a, const JobInfo& b) {
      return a.priority == b.priority ? 0 : a.priority > b.priority ? -1 : 1;
    });
  }
};

// Plain first-come-first-served: submit time, then id (ignores priority).
class FifoPlugin : public Plugin {
 public:
  explicit FifoPlugin(const SchedConfig&) {}
  std::string Name() const override { return "fifo"; }
  void OnSessionOpen(Session& s) override {
    s.AddJobOrder([](const JobInfo& a, const JobInfo& b) {
      if (a.snap->submit_time != b.snap->submit_time)
        return a.snap->submit_time < b.snap->submit_time ? -1 : 1;
      return a.snap->id == b.snap->id ? 0 : a.snap->id < b.snap->id ? -1 : 1;
    });
  }
};

// A gang is ready when its minimum number of tasks (all of them by default) is placed.
class GangPlugin : public Plugin {
 public:
  explicit GangPlugin(const SchedConfig&) {}
  std::string Name() const override { return "gang"; }
  void OnSessionOpen(Session& s) override {
    s.AddGangReady([](const JobInfo& j, uint32_t placed) { return placed >= j.min_tasks; });
  }
};

// Node scores in [0, 1]: binpack prefers nodes with less left free (in the dimension the job
// uses most: GPUs for GPU jobs, else CPUs); spread prefers emptier nodes.
class NodeOrderPlugin : public Plugin {
 public:
  explicit NodeOrderPlugin(const SchedConfig& c) : binpack_(c.binpack_weight), spread_(c.spread_weight) {}
  std::string Name() const override { return "nodeorder"; }
  void OnSessionOpen(Session& s) override {
    auto free_frac = [](const JobInfo& j, const NodeRt& n, const Amount& a) {
      if (j.total.gpus > 0 && n.total.gpus > 0) return double(a.gpus) / double(n.total.gpus);
      return n.total.cpus ? double(a.cpus) / double(n.total.cpus) : 0.0;
    };
    if (binpack_ > 0)
      s.AddNodeScore([free_frac](const JobInfo& j, const NodeRt& n, const Amount& a) {
        return 1.0 - free_frac(j, n, a);
      }, binpack_);
    if (spread_ > 0) s.AddNodeScore(free_frac, spread_);
  }

 private:
  double binpack_, spread_;
};

}  // namespace

void RegisterOrderPlugins(Registry& r) {
  r.AddPlugin("priority", Simple<PriorityPlugin>());
  r.AddPlugin("fifo", Simple<FifoPlugin>());
  r.AddPlugin("gang", Simple<GangPlugin>());
  r.AddPlugin("nodeorder", Simple<NodeOrderPlugin>());
}

void RegisterBuiltinPlugins(Registry& r) {
  RegisterOrderPlugins(r);
  RegisterPredicatesPlugin(r);
  RegisterLifecyclePlugin(r);
  RegisterLimitsPlugin(r);
}

}  // namespace tessera::sched
