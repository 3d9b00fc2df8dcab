// priority, fifo, gang and nodeorder: the plugins that order jobs, judge gangs and score nodes.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

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

// Node scores in [0, 1] (sched_config.h, "Node order"): binpack prefers nodes with less left
// free (in the dimension the job uses most: GPUs for GPU jobs, else CPUs); spread prefers
// emptier nodes; endtime prefers nodes whose work already outlasts the job; size prefers the
// smallest nodes of the partition (large nodes kept for the jobs only they can hold); scarce
// keeps jobs off the nodes of a kind (size, features, GPU model) few nodes of the partition
// match: those the partition's largest or constrained jobs need (ScarceScores).
class NodeOrderPlugin : public Plugin {
 public:
  explicit NodeOrderPlugin(const SchedConfig& c)
      : binpack_(c.binpack_weight), spread_(c.spread_weight), endtime_(c.endtime_weight),
        size_(c.size_weight), scarce_(c.scarce_weight) {}
  std::string Name() const override { return "nodeorder"; }
  void OnSessionOpen(Session& s) override {
    auto free_frac = [](const JobInfo& j, const NodeRt& n, const Amount& a) {
      if (j.total.gpus > 0 && n.total.gpus > 0) return double(a.gpus) / double(n.total.gpus);
      return n.total.cpus ? double(a.cpus) / double(n.total.cpus) : 0.0;
    };
    if (binpack_ > 0)
      s.AddNodeScore([free_frac](const JobInfo& j, const NodeRt& n, const NodeFit& f) {
        return 1.0 - free_frac(j, n, f.avail);
      }, binpack_);
    if (spread_ > 0)
      s.AddNodeScore([free_frac](const JobInfo& j, const NodeRt& n, const NodeFit& f) {
        return free_frac(j, n, f.avail);
      }, spread_);
    if (endtime_ > 0) s.AddNodeScore(EndTimeScore, endtime_);
    if (size_ > 0) {
      // The largest CPUs, memory and GPUs of any node, per partition (once per cycle).
      auto largest = std::make_shared<std::vector<Amount>>(s.state().PartitionCount());
      for (const NodeRt& n : s.state().nodes())
        for (uint32_t p : n.partitions) {
          Amount& m = (*largest)[p];
          m.cpus = std::max(m.cpus, n.total.cpus);
          m.mem = std::max(m.mem, n.total.mem);
          m.gpus = std::max(m.gpus, n.total.gpus);
        }
      s.AddNodeScore([largest](const JobInfo& j, const NodeRt& n, const NodeFit&) {
        if (j.partition < 0) return 0.0;
        return SizeScore(n.total, (*largest)[static_cast<size_t>(j.partition)]);
      }, size_);
    }
    if (scarce_ > 0) {
      auto scores = std::make_shared<std::vector<std::vector<float>>>(ScarceScores(s.state()));
      s.AddNodeScore([scores](const JobInfo& j, const NodeRt& n, const NodeFit&) {
        if (j.partition < 0) return 0.0;
        const auto& v = (*scores)[static_cast<size_t>(j.partition)];
        return n.index < v.size() ? double(v[n.index]) : 0.0;
      }, scarce_);
    }
  }

  // Per partition and node: 1 - fewest / hosts(node). hosts(node) is the number of the
  // partition's nodes that could run a job asking for the node's whole capacity and kind: at
  // least as many CPUs, as much memory and as many GPUs, and every one of its features and GPU
  // models; `fewest` is the smallest such count in the partition. The nodes of the rarest kind
  // score 0, common ones near 1, and a partition of identical nodes 0 everywhere (no change).
  // A job that fits only the rare nodes sees equal scores on all its candidates (no effect);
  // a small or unconstrained job is kept off them. Cost per partition and cycle: nodes are
  // grouped into classes (CPUs, GPUs, tags) holding their memory sizes sorted; a class is
  // compared only with the classes sharing its rarest tag, memory by binary search:
  // O(nodes log nodes + classes x classes with that tag x log nodes).
  static std::vector<std::vector<float>> ScarceScores(const ClusterState& st) {
    struct Class {
      int64_t cpus, gpus;
      std::vector<std::string> tags;  // features and "gpu:MODEL", sorted, unique
      bool operator<(const Class& o) const {
        return std::tie(cpus, gpus, tags) < std::tie(o.cpus, o.gpus, o.tags);
      }
      bool Holds(const Class& o) const {  // CPUs, GPUs and tags of `o` fit this class's nodes
        return cpus >= o.cpus && gpus >= o.gpus &&
               std::includes(tags.begin(), tags.end(), o.tags.begin(), o.tags.end());
      }
    };
    auto class_of = [&](const NodeRt& n) {
      Class c{n.total.cpus, n.total.gpus, n.snap->features};
      for (const GpuSnap& g : n.snap->gpus) c.tags.push_back("gpu:" + g.model);
      std::sort(c.tags.begin(), c.tags.end());
      c.tags.erase(std::unique(c.tags.begin(), c.tags.end()), c.tags.end());
      return c;
    };
    std::vector<std::vector<float>> out(st.PartitionCount());
    for (size_t p = 0; p < out.size(); ++p) {
      const auto& idx = st.PartitionNodes(static_cast<int>(p));
      if (idx.empty()) continue;
      std::map<Class, uint32_t> index;  // class -> position in `classes`
      std::vector<const Class*> classes;
      std::vector<std::vector<int64_t>> mems;  // per class: its nodes' memory, sorted
      std::vector<uint32_t> class_at(idx.size());
      for (size_t i = 0; i < idx.size(); ++i) {
        const NodeRt& n = st.nodes()[idx[i]];
        auto [it, added] = index.emplace(class_of(n), uint32_t(classes.size()));
        if (added) classes.push_back(&it->first), mems.emplace_back();
        mems[it->second].push_back(n.total.mem);
        class_at[i] = it->second;
      }
      for (auto& m : mems) std::sort(m.begin(), m.end());
      // Only classes carrying all of a class's tags can hold it: those with its rarest tag.
      std::map<std::string, std::vector<uint32_t>> with_tag;
      for (uint32_t c = 0; c < classes.size(); ++c)
        for (const auto& t : classes[c]->tags) with_tag[t].push_back(c);
      std::vector<uint32_t> all(classes.size());
      for (uint32_t c = 0; c < classes.size(); ++c) all[c] = c;
      auto hosts = [&](uint32_t a, int64_t mem) {  // nodes holding class a with >= mem
        const std::vector<uint32_t>* scan = &all;
        for (const auto& t : classes[a]->tags)
          if (const auto& w = with_tag[t]; w.size() < scan->size()) scan = &w;
        uint32_t h = 0;
        for (uint32_t b : *scan)
          if (classes[b]->Holds(*classes[a]))
            h += uint32_t(mems[b].end() - std::lower_bound(mems[b].begin(), mems[b].end(), mem));
        return h;
      };
      // hosts per node, computed once per (class, distinct memory size).
      std::vector<uint32_t> node_hosts(idx.size());
      std::map<std::pair<uint32_t, int64_t>, uint32_t> memo;
      uint32_t fewest = UINT32_MAX;
      for (size_t i = 0; i < idx.size(); ++i) {
        auto key = std::make_pair(class_at[i], st.nodes()[idx[i]].total.mem);
        auto it = memo.find(key);
        if (it == memo.end()) it = memo.emplace(key, hosts(key.first, key.second)).first;
        node_hosts[i] = it->second;
        fewest = std::min(fewest, it->second);
      }
      auto& v = out[p];
      v.assign(*std::max_element(idx.begin(), idx.end()) + 1, 0.0f);
      for (size_t i = 0; i < idx.size(); ++i)
        v[idx[i]] = 1.0f - float(fewest) / float(node_hosts[i]);
    }
    return out;
  }

  // 1 when the node would not be empty before the job ends anyway, falling linearly to 0 as
  // the job would delay the time the node first empties (from the job's start on, by its
  // timeline: running jobs' ends; later reservations do not count) by its whole time limit
  // (an idle node: 0). Long jobs join nodes that are busy for long; short ones fill nodes
  // whose work outlasts them, so nodes that are about to empty stay free for whole-node jobs.
  static double EndTimeScore(const JobInfo&, const NodeRt& n, const NodeFit& f) {
    int64_t extends = std::max<int64_t>(0, f.end - FirstEmpty(n, f.start));
    int64_t len = std::max<int64_t>(1, f.end - f.start);
    return 1.0 - double(std::min(extends, len)) / double(len);
  }
  // The first time >= from at which `n` has every unit free, by its timeline (the last event's
  // time when it never does, e.g. a GPU held by a reconfiguration).
  static int64_t FirstEmpty(const NodeRt& n, int64_t from) {
    auto empty = [&](const Amount& a) {
      return a.cpus >= n.total.cpus && a.mem >= n.total.mem && a.gpus >= n.total.gpus;
    };
    const auto& ev = n.events;
    size_t i = 0;
    if (empty(ClusterState::LevelAt(n, from, &i))) return from;
    while (i < ev.size()) {
      int64_t t = ev[i].time;
      for (; i + 1 < ev.size() && ev[i + 1].time == t; ++i) {}
      if (empty(ClusterState::Level(n, i++))) return t;
    }
    return ev.empty() ? from : ev.back().time;
  }
  // 1 - the node's size: the mean over CPUs, memory and GPUs (those the partition has) of its
  // total over the partition's largest. The largest node scores 0.
  static double SizeScore(const Amount& node, const Amount& largest) {
    double sum = 0;
    int dims = 0;
    auto add = [&](int64_t v, int64_t m) {
      if (m <= 0) return;
      sum += double(v) / double(m);
      ++dims;
    };
    add(node.cpus, largest.cpus);
    add(node.mem, largest.mem);
    add(node.gpus, largest.gpus);
    return dims ? 1.0 - sum / dims : 0.0;
  }

 private:
  double binpack_, spread_, endtime_, size_, scarce_;
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
