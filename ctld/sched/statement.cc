#include "ctld/sched/statement.h"

#include <algorithm>

namespace tessera::sched {

std::vector<uint32_t> Statement::Allocate(NodeRt& n, const Amount& a, const std::string& model,
                                          int64_t end, std::vector<std::string>* mig_uuids) {
  Op op{&n, a, -1, end, {}, {}, n.idle, -1, {}};
  std::vector<uint32_t> indices;
  int64_t want = a.gpus;
  for (auto it = n.free_gpus.begin(); it != n.free_gpus.end() && want > 0;) {
    const GpuSnap& g = n.snap->gpus[*it];
    if (GpuUnitMatches(model, g.model, false)) {
      op.gpus.push_back(*it);
      indices.push_back(g.index);
      it = n.free_gpus.erase(it);
      --want;
    } else {
      ++it;
    }
  }
  for (auto it = n.free_mig.begin(); it != n.free_mig.end() && want > 0;) {
    const GpuSnap& g = n.snap->gpus[*it];
    if (GpuUnitMatches(model, g.model, true)) {
      op.mig.push_back(*it);
      if (mig_uuids) mig_uuids->push_back(g.mig_uuid);
      it = n.free_mig.erase(it);
      --want;
    } else {
      ++it;
    }
  }
  state_.TakeNow(n, a);
  n.idle = false;
  state_.AddEvent(n, end, a);
  ops_.push_back(std::move(op));
  return indices;
}

uint32_t Statement::TakeShare(NodeRt& n, int pool, const ShareAmount& a, int64_t end) {
  GpuShareRt& p = n.shares[static_cast<size_t>(pool)];
  Amount whole{0, 0, p.InUse() ? 0 : 1};
  Op op{&n, whole, -1, end, {}, {}, n.idle, pool, a};
  if (whole.gpus) {
    n.free_gpus.erase(std::find(n.free_gpus.begin(), n.free_gpus.end(), p.pos));
    op.gpus.push_back(p.pos);
  }
  p.mps_used += a.mps;
  p.shards_used += a.shards;
  state_.TakeNow(n, whole);
  state_.AddEvent(n, end, whole);
  ops_.push_back(std::move(op));
  return p.index;
}

void Statement::Reserve(NodeRt& n, const Amount& a, int64_t start, int64_t end) {
  state_.AddEvent(n, start, -a);
  state_.AddEvent(n, end, a);
  ops_.push_back(Op{&n, a, start, end, {}, {}, n.idle, -1, {}});
}

void Statement::Discard() {
  for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) {
    NodeRt& n = *it->node;
    if (it->share_pool >= 0) {
      GpuShareRt& p = n.shares[static_cast<size_t>(it->share_pool)];
      p.mps_used -= it->share.mps;
      p.shards_used -= it->share.shards;
    }
    if (it->start < 0) {
      state_.RemoveEvent(n, it->end, it->amount);
      n.free_gpus.insert(n.free_gpus.end(), it->gpus.begin(), it->gpus.end());
      std::sort(n.free_gpus.begin(), n.free_gpus.end());
      n.free_mig.insert(n.free_mig.end(), it->mig.begin(), it->mig.end());
      std::sort(n.free_mig.begin(), n.free_mig.end());
      n.idle = it->was_idle;
      state_.ReturnNow(n, it->amount);
    } else {
      state_.RemoveEvent(n, it->end, it->amount);
      state_.RemoveEvent(n, it->start, -it->amount);
    }
  }
  ops_.clear();
}

}  // namespace tessera::sched
