#pragma once
// ClusterState: the mutable per-cycle view of the nodes, built once from the snapshot.
//
// Each node keeps its free resources now (with the exact free GPU indices) and a timeline: a
// list of (time, delta) events sorted by time. Running jobs add a release at their expected
// end; jobs started in this cycle take resources now and add a release at now + time limit;
// reservations add a take at their start and a release at their end. Availability over a
// window [s, e) is the per-dimension minimum of free + prefix sums, so "can it start now" and
// "when is the earliest start" are the same query at different s (Flux's planner idea).
//
// Each partition also has a merged timeline of its usable nodes (Timeline(): built on first
// use, then kept exact by AddEvent/RemoveEvent/TakeNow/ReturnNow), walked by reservations.
//
// Invariant: free never goes negative; events stay sorted. Partition node lists keep the
// configured order (node Weight, then config order). "Open" lists hold the nodes of a partition
// that may still have free CPUs (resp. GPUs) now; they shrink lazily as nodes fill up.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ctld/sched/gpu_share.h"
#include "ctld/sched/snapshot.h"
#include "ctld/sched/topology_state.h"

namespace tessera::sched {

// The model an --exclusive placement takes: every GPU unit of the node (whole GPUs and MIG
// instances alike).
inline const std::string kAllGpuUnits = "*";

// Whether a GPU unit of model `unit_model` (mig: it is a MIG instance) serves a request for
// `model` (see ClusterState::FreeGpusNow).
inline bool GpuUnitMatches(const std::string& model, const std::string& unit_model, bool mig) {
  if (model.empty()) return !mig;
  return model == kAllGpuUnits || model == unit_model;
}

struct Amount {
  int64_t cpus = 0;
  int64_t mem = 0;
  int64_t gpus = 0;
  Amount& operator+=(const Amount& o) {
    cpus += o.cpus, mem += o.mem, gpus += o.gpus;
    return *this;
  }
  Amount operator-() const { return {-cpus, -mem, -gpus}; }
};

struct TimeEvent {
  int64_t time = 0;
  Amount delta;
};

// One instant of a partition's merged timeline (ClusterState::Timeline): the summed deltas of
// its events at that time, how many events, and how many of them give CPUs or GPUs back.
struct TimeBucket {
  Amount sum;
  uint32_t count = 0;
  uint32_t gains = 0;
};

// A partition's timeline: the events of its usable nodes merged by time, and the free-now sum
// of those nodes. Equal to gathering and sorting every node's events, kept up to date on every
// event and take instead (a reservation walks it in O(instants), not O(events log events)).
struct PartTimeline {
  Amount free;
  std::map<int64_t, TimeBucket> at;
  // The instant changed last (a reservation adds its start and end on every node it holds):
  // found again without a search. at.end() when none.
  std::map<int64_t, TimeBucket>::iterator last = at.end();
};

struct NodeRt {
  const NodeSnap* snap = nullptr;
  uint32_t index = 0;
  bool usable = true;
  bool idle = true;                    // nothing running and nothing started this cycle
  Amount free;                         // now
  Amount total;
  std::vector<uint32_t> free_gpus;     // positions in snap->gpus: whole GPUs free and healthy now
  std::vector<uint32_t> free_mig;      // positions in snap->gpus: MIG instances free and healthy now
  int64_t whole_total = 0;             // healthy whole GPUs (total.gpus also counts instances)
  std::vector<const std::string*> models;  // distinct models of its healthy units (HasGpuModel)
  std::vector<TimeEvent> events;       // sorted by time
  // Cache of the free amount after each event (free + the deltas of events[0..i]), valid for
  // the indexes below `levels_ok`; ClusterState keeps `levels_ok` at or below the first event
  // changed and at 0 when `free` changes (see ClusterState::LevelAt).
  mutable std::vector<Amount> levels;
  mutable size_t levels_ok = 0;
  std::vector<std::string> features;   // sorted
  std::vector<uint32_t> partitions;    // partition ids
  std::vector<GpuShareRt> shares;      // GPU share pools (gpu_share.h)
};

class ClusterState {
 public:
  explicit ClusterState(const ClusterSnapshot& snap);

  int64_t now() const { return now_; }
  std::vector<NodeRt>& nodes() { return nodes_; }
  const std::vector<NodeRt>& nodes() const { return nodes_; }
  NodeRt* FindNode(const std::string& name);
  // Partition id by name, or -1.
  int PartitionId(const std::string& name) const;
  const PartitionSnap& Partition(int id) const { return *partitions_[static_cast<size_t>(id)]; }
  size_t PartitionCount() const { return partitions_.size(); }
  const std::vector<uint32_t>& PartitionNodes(int id) const { return part_nodes_[static_cast<size_t>(id)]; }
  // Nodes of partition `id` that may have free CPUs (gpu=false) or GPUs (gpu=true) now. The
  // caller scans it with CompactOpen, which drops nodes that are full.
  std::vector<uint32_t>& OpenNodes(int id, bool gpu) {
    return (gpu ? open_gpu_ : open_cpu_)[static_cast<size_t>(id)];
  }
  // Free CPUs/GPUs now summed over the partition's usable nodes (an upper bound for fast fail).
  const Amount& PartitionFree(int id) const { return part_free_[static_cast<size_t>(id)]; }

  // Minimum availability of `n` over [start, end).
  static Amount MinAvail(const NodeRt& n, int64_t start, int64_t end);
  // The free amount of `n` after the events at or before `t` (a binary search and the cached
  // levels); `*next` = the index of the first event after `t`.
  static Amount LevelAt(const NodeRt& n, int64_t t, size_t* next);
  // The free amount after events[i] (i < events.size()), from the cached levels.
  static const Amount& Level(const NodeRt& n, size_t i);
  // Free GPU units of `model` on `n` now: "" = whole GPUs of any type (never MIG instances), a
  // type = whole GPUs of that type, a MIG profile = instances of it, kAllGpuUnits = every unit.
  static int64_t FreeGpusNow(const NodeRt& n, const std::string& model);
  // Whether `n` has any unit of `model` (a type or a profile; "" and kAllGpuUnits: true).
  static bool HasGpuModel(const NodeRt& n, const std::string& model);
  // Whether some node of partition `id` has units of `model` ("" : true). Memoized: node models
  // do not change within a cycle.
  bool PartitionHasModel(int id, const std::string& model) const;
  // (gpusched) Memo of GpuMemCandidates (gpu_mem.h): (partition, MiB, filter) -> models.
  using GpuMemMemoMap = std::map<std::tuple<int, uint64_t, std::string>, std::vector<std::string>>;
  GpuMemMemoMap& GpuMemMemo() const { return gpu_mem_memo_; }

  // The merged timeline of partition `id` (PartTimeline), built on first use in the cycle and
  // kept exact from then on by AddEvent, RemoveEvent, TakeNow and ReturnNow.
  const PartTimeline& Timeline(int id);

  // Mutations (used by Statement, which can undo them).
  void AddEvent(NodeRt& n, int64_t time, const Amount& delta);
  void RemoveEvent(NodeRt& n, int64_t time, const Amount& delta);
  void TakeNow(NodeRt& n, const Amount& a);     // also updates partition sums
  void ReturnNow(NodeRt& n, const Amount& a);
  // The topology's candidate sets and their free sums (issue 15); null = flat.
  TopoState* topo() { return topo_.get(); }

 private:
  int64_t now_;
  std::vector<NodeRt> nodes_;
  std::vector<const PartitionSnap*> partitions_;
  std::unordered_map<std::string, uint32_t> node_index_;
  std::unordered_map<std::string, int> part_index_;
  std::vector<std::vector<uint32_t>> part_nodes_, open_cpu_, open_gpu_;
  std::vector<Amount> part_free_;
  mutable std::map<std::pair<int, std::string>, bool> part_models_;
  std::unique_ptr<TopoState> topo_;
  std::vector<std::unique_ptr<PartTimeline>> timelines_;  // per partition; null until Timeline()
  mutable GpuMemMemoMap gpu_mem_memo_;
};

}  // namespace tessera::sched
