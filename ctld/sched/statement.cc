#include "ctld/sched/statement.h"

#include <algorithm>

namespace tessera::sched {

std::vector<uint32_t> Statement::Allocate(NodeRt& n, const Amount& a, const std::string& model,
                                          int64_t end, std::vector<std::string>* mig_uuids) {
  Op op{&n, a, -1, end, {}, {}, n.idle};
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

void Statement::Reserve(NodeRt& n, const Amount& a, int64_t start, int64_t end) {
  state_.AddEvent(n, start, -a);
  state_.AddEvent(n, end, a);
  ops_.push_back(Op{&n, a, start, end, {}, {}, n.idle});
}

void Statement::Discard() {
  for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) {
    NodeRt& n = *it->node;
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
