#pragma once
// VictimRelease (issue 16 §4): hands a running job's resources back to the ClusterState, as if
// it had ended now, and undoes that on request. The preempt action releases candidate victims,
// probes whether the preemptor then fits (PlaceNow), and undoes what it does not keep.
//
// Release(r): for every node of r (a whole gang, every node): its CPUs, memory and GPU units
// become free now (the exact GPU indices and MIG instances of NodeUse; with none listed, any
// `gpus` held whole GPUs of the node), and r's release event at its expected end is removed.
// A node that is then entirely free counts as idle (for --exclusive).
// UndoTo(mark) reverts, newest first, every release made after Mark() returned `mark`; the
// destructor reverts all that was not kept. Keep() makes the releases so far permanent.
// Cost: a release touches only the victim's nodes (no partition-wide work); Publish() then
// puts the nodes released since the last call back into their partitions' open lists (one
// pass over each list, not one per release) and must be called before a placement.
// Occupy(r): after the preemptor is placed, whatever of r's resources it did not take is held
// again until r's expected end, so no other job of this cycle is placed on them (the victim
// still holds them until it has ended).
#include <cstdint>
#include <vector>

#include "ctld/sched/cluster_state.h"

namespace tessera::sched {

class VictimRelease {
 public:
  explicit VictimRelease(ClusterState& st) : st_(st) {}
  ~VictimRelease() { UndoTo(0); }
  VictimRelease(const VictimRelease&) = delete;
  VictimRelease& operator=(const VictimRelease&) = delete;

  size_t Mark() const { return ops_.size(); }
  void Release(const RunningSnap& r);
  void UndoTo(size_t mark);
  void Keep() { ops_.clear(); }
  void Occupy(const RunningSnap& r);
  void Publish();

 private:
  struct Op {
    NodeRt* node;
    Amount freed;                // what became free now
    Amount event;                // the release event removed
    int64_t end;
    std::vector<uint32_t> gpus;  // positions in snap->gpus put into free_gpus
    std::vector<uint32_t> mig;   // positions put into free_mig
    bool was_idle;
  };
  ClusterState& st_;
  std::vector<Op> ops_;
  std::vector<uint32_t> touched_;  // nodes released since the last Publish
};

}  // namespace tessera::sched
