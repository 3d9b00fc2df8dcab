#include "ctld/sched/cluster_state.h"

#include <algorithm>

namespace tessera::sched {

ClusterState::ClusterState(const ClusterSnapshot& snap) : now_(snap.now) {
  for (const auto& p : snap.partitions) {
    part_index_[p.name] = static_cast<int>(partitions_.size());
    partitions_.push_back(&p);
  }
  part_nodes_.resize(partitions_.size());
  part_free_.resize(partitions_.size());
  timelines_.resize(partitions_.size());
  nodes_.reserve(snap.nodes.size());
  for (const auto& ns : snap.nodes) {
    NodeRt n;
    n.snap = &ns;
    n.index = static_cast<uint32_t>(nodes_.size());
    n.usable = ns.schedulable;
    n.idle = ns.idle;
    n.total = {ns.cpus_total, static_cast<int64_t>(ns.mem_total), 0};
    n.free = {ns.cpus_free, static_cast<int64_t>(ns.mem_free), 0};
    for (uint32_t i = 0; i < ns.gpus.size(); ++i) {
      if (!ns.gpus[i].healthy) continue;
      ++n.total.gpus;
      bool mig = !ns.gpus[i].mig_uuid.empty();
      if (!mig) ++n.whole_total;
      if (ns.gpus[i].free) (mig ? n.free_mig : n.free_gpus).push_back(i);
      const std::string& m = ns.gpus[i].model;
      if (std::none_of(n.models.begin(), n.models.end(), [&](const std::string* x) { return *x == m; }))
        n.models.push_back(&m);
    }
    n.free.gpus = static_cast<int64_t>(n.free_gpus.size() + n.free_mig.size());
    n.shares = BuildSharePools(ns);
    n.features = ns.features;
    std::sort(n.features.begin(), n.features.end());
    for (const auto& pn : ns.partitions) {
      auto it = part_index_.find(pn);
      if (it != part_index_.end()) n.partitions.push_back(static_cast<uint32_t>(it->second));
    }
    node_index_[ns.name] = n.index;
    nodes_.push_back(std::move(n));
  }
  for (const auto& r : snap.running) {
    int64_t end = std::max(r.end_time, now_ + 1);
    for (const auto& u : r.nodes) {
      NodeRt* n = FindNode(u.node);
      if (n) AddEvent(*n, end, {u.cpus, static_cast<int64_t>(u.mem_mib), u.gpus});
    }
  }
  for (auto& n : nodes_)
    for (uint32_t pid : n.partitions) part_nodes_[pid].push_back(n.index);
  for (auto& list : part_nodes_)
    std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      return nodes_[a].snap->weight < nodes_[b].snap->weight;
    });
  open_cpu_.resize(partitions_.size());
  open_gpu_.resize(partitions_.size());
  for (size_t p = 0; p < partitions_.size(); ++p)
    for (uint32_t i : part_nodes_[p]) {
      const NodeRt& n = nodes_[i];
      if (!n.usable) continue;
      if (n.free.cpus > 0) open_cpu_[p].push_back(i);
      if (n.free.cpus > 0 && n.free.gpus > 0) open_gpu_[p].push_back(i);
      part_free_[p] += n.free;
    }
  if (snap.topology && snap.topology->kind != TopologyKind::kFlat)
    topo_ = std::make_unique<TopoState>(snap.topology, nodes_, partitions_.size());
}

NodeRt* ClusterState::FindNode(const std::string& name) {
  auto it = node_index_.find(name);
  return it == node_index_.end() ? nullptr : &nodes_[it->second];
}

int ClusterState::PartitionId(const std::string& name) const {
  auto it = part_index_.find(name);
  return it == part_index_.end() ? -1 : it->second;
}

const Amount& ClusterState::Level(const NodeRt& n, size_t i) {
  if (i >= n.levels_ok) {
    n.levels.resize(n.events.size());
    for (size_t k = n.levels_ok; k <= i; ++k) {
      n.levels[k] = k ? n.levels[k - 1] : n.free;
      n.levels[k] += n.events[k].delta;
    }
    n.levels_ok = i + 1;
  }
  return n.levels[i];
}

Amount ClusterState::LevelAt(const NodeRt& n, int64_t t, size_t* next) {
  auto it = std::upper_bound(n.events.begin(), n.events.end(), t,
                             [](int64_t x, const TimeEvent& e) { return x < e.time; });
  size_t i = static_cast<size_t>(it - n.events.begin());
  *next = i;
  return i ? Level(n, i - 1) : n.free;
}

Amount ClusterState::MinAvail(const NodeRt& n, int64_t start, int64_t end) {
  size_t i = 0;
  Amount low = LevelAt(n, start, &i);
  for (; i < n.events.size() && n.events[i].time < end; ++i) {
    const Amount& cur = Level(n, i);
    low.cpus = std::min(low.cpus, cur.cpus);
    low.mem = std::min(low.mem, cur.mem);
    low.gpus = std::min(low.gpus, cur.gpus);
  }
  return low;
}

int64_t ClusterState::FreeGpusNow(const NodeRt& n, const std::string& model) {
  if (model.empty()) return static_cast<int64_t>(n.free_gpus.size());
  if (model == kAllGpuUnits) return static_cast<int64_t>(n.free_gpus.size() + n.free_mig.size());
  int64_t c = 0;
  for (uint32_t g : n.free_gpus) c += n.snap->gpus[g].model == model;
  for (uint32_t g : n.free_mig) c += n.snap->gpus[g].model == model;
  return c;
}

bool ClusterState::HasGpuModel(const NodeRt& n, const std::string& model) {
  if (model.empty() || model == kAllGpuUnits) return true;
  for (const std::string* m : n.models)
    if (*m == model) return true;
  return false;
}

bool ClusterState::PartitionHasModel(int id, const std::string& model) const {
  if (model.empty()) return true;
  auto key = std::make_pair(id, model);
  auto it = part_models_.find(key);
  if (it != part_models_.end()) return it->second;
  bool has = false;
  for (uint32_t n : part_nodes_[static_cast<size_t>(id)])
    if ((has = HasGpuModel(nodes_[n], model))) break;
  return part_models_[key] = has;
}

namespace {

bool Gains(const Amount& d) { return d.cpus > 0 || d.gpus > 0; }

std::map<int64_t, TimeBucket>::iterator BucketAt(PartTimeline& tl, int64_t time) {
  if (tl.last == tl.at.end() || tl.last->first != time) tl.last = tl.at.try_emplace(time).first;
  return tl.last;
}

void AddToBucket(PartTimeline& tl, int64_t time, const Amount& delta) {
  TimeBucket& b = BucketAt(tl, time)->second;
  b.sum += delta;
  ++b.count;
  b.gains += Gains(delta);
}

}  // namespace

const PartTimeline& ClusterState::Timeline(int id) {
  auto& tl = timelines_[static_cast<size_t>(id)];
  if (tl) return *tl;
  tl = std::make_unique<PartTimeline>();
  for (uint32_t i : part_nodes_[static_cast<size_t>(id)]) {
    const NodeRt& n = nodes_[i];
    if (!n.usable) continue;
    tl->free += n.free;
    for (const auto& e : n.events) AddToBucket(*tl, e.time, e.delta);
  }
  return *tl;
}

void ClusterState::AddEvent(NodeRt& n, int64_t time, const Amount& delta) {
  auto it = std::upper_bound(n.events.begin(), n.events.end(), time,
                             [](int64_t t, const TimeEvent& e) { return t < e.time; });
  n.levels_ok = std::min(n.levels_ok, static_cast<size_t>(it - n.events.begin()));
  n.events.insert(it, TimeEvent{time, delta});
  if (!n.usable) return;
  for (uint32_t p : n.partitions)
    if (auto& tl = timelines_[p]) AddToBucket(*tl, time, delta);
}

void ClusterState::RemoveEvent(NodeRt& n, int64_t time, const Amount& delta) {
  for (size_t i = n.events.size(); i-- > 0;) {
    const TimeEvent& e = n.events[i];
    if (e.time == time && e.delta.cpus == delta.cpus && e.delta.mem == delta.mem &&
        e.delta.gpus == delta.gpus) {
      n.events.erase(n.events.begin() + static_cast<long>(i));
      n.levels_ok = std::min(n.levels_ok, i);
      if (!n.usable) return;
      for (uint32_t p : n.partitions) {
        auto& tl = timelines_[p];
        if (!tl) continue;
        auto b = BucketAt(*tl, time);
        b->second.sum += -delta;
        b->second.gains -= Gains(delta);
        if (--b->second.count == 0) {
          tl->at.erase(b);
          tl->last = tl->at.end();
        }
      }
      return;
    }
  }
}

void ClusterState::TakeNow(NodeRt& n, const Amount& a) {
  Amount before = n.free;
  n.free += -a;
  n.levels_ok = 0;
  for (uint32_t p : n.partitions) part_free_[p] += -a;
  if (n.usable)
    for (uint32_t p : n.partitions)
      if (auto& tl = timelines_[p]) tl->free += -a;
  if (topo_) topo_->OnChange(n, before);
}

void ClusterState::ReturnNow(NodeRt& n, const Amount& a) {
  Amount before = n.free;
  n.free += a;
  n.levels_ok = 0;
  for (uint32_t p : n.partitions) part_free_[p] += a;
  if (n.usable)
    for (uint32_t p : n.partitions)
      if (auto& tl = timelines_[p]) tl->free += a;
  if (topo_) topo_->OnChange(n, before);
  // A node that got room back must be scannable again.
  for (uint32_t p : n.partitions) {
    auto& oc = open_cpu_[p];
    if (n.free.cpus > 0 && std::find(oc.begin(), oc.end(), n.index) == oc.end()) oc.push_back(n.index);
    auto& og = open_gpu_[p];
    if (n.free.gpus > 0 && std::find(og.begin(), og.end(), n.index) == og.end()) og.push_back(n.index);
  }
}

}  // namespace tessera::sched
