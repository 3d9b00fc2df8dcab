#pragma once
// Statement: a group of tentative changes to the ClusterState that is committed or discarded
// as a whole (Volcano/KAI "statement"). Actions place a whole gang inside one statement, check
// gang readiness, then Commit or Discard, so nothing is ever held half-allocated.
// A statement that is neither committed nor discarded is discarded by its destructor.
#include <cstdint>
#include <string>
#include <vector>

#include "ctld/sched/cluster_state.h"

namespace tessera::sched {

class Statement {
 public:
  explicit Statement(ClusterState& state) : state_(state) { ops_.reserve(8); }
  ~Statement() { Discard(); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Takes `a` on `n` now until `end`, picking `a.gpus` free GPU units of `model` (matching as
  // ClusterState::FreeGpusNow: "" = whole GPUs of any type, a profile = its MIG instances,
  // kAllGpuUnits = every unit). Returns the whole GPUs' indices taken; the MIG instances taken
  // are appended to `mig_uuids` when given. Requires the resources to be free now.
  std::vector<uint32_t> Allocate(NodeRt& n, const Amount& a, const std::string& model, int64_t end,
                                 std::vector<std::string>* mig_uuids = nullptr);
  // Takes share `a` from pool `pool` (position in n.shares) now until `end` (gpu_share.h: the
  // first share of a GPU takes it out of free_gpus and one GPU out of the counts until `end`).
  // Requires PoolFits. Returns the GPU index shared.
  uint32_t TakeShare(NodeRt& n, int pool, const ShareAmount& a, int64_t end);
  // Holds `a` on `n` over [start, end) in the timeline (a reservation).
  void Reserve(NodeRt& n, const Amount& a, int64_t start, int64_t end);
  void Commit() { ops_.clear(); }
  void Discard();

 private:
  struct Op {
    NodeRt* node;
    Amount amount;
    int64_t start;  // -1 for an allocation now
    int64_t end;
    std::vector<uint32_t> gpus;  // positions in snap->gpus (whole GPUs)
    std::vector<uint32_t> mig;   // positions in snap->gpus (MIG instances)
    bool was_idle;
    int share_pool = -1;  // TakeShare: the pool and amount taken
    ShareAmount share;
  };
  ClusterState& state_;
  std::vector<Op> ops_;
};

}  // namespace tessera::sched
