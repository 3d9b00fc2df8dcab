#include "ctld/sched/victim_release.h"

#include <algorithm>

namespace tessera::sched {
namespace {

bool Has(const std::vector<uint32_t>& v, uint32_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

void InsertSorted(std::vector<uint32_t>& v, uint32_t x) {
  v.insert(std::upper_bound(v.begin(), v.end(), x), x);
}

void Erase(std::vector<uint32_t>& v, uint32_t x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it != v.end()) v.erase(it);
}

// Positions in n.snap->gpus of the units `u` holds (see the header for units not listed).
void UnitsOf(const NodeRt& n, const NodeUse& u, std::vector<uint32_t>* whole,
             std::vector<uint32_t>* mig) {
  const auto& g = n.snap->gpus;
  for (uint32_t idx : u.gpu_indices)
    for (uint32_t p = 0; p < g.size(); ++p)
      if (g[p].index == idx && g[p].mig_uuid.empty() && g[p].healthy) whole->push_back(p);
  for (const auto& uuid : u.mig_uuids)
    for (uint32_t p = 0; p < g.size(); ++p)
      if (g[p].mig_uuid == uuid && g[p].healthy) mig->push_back(p);
  if (!u.gpu_indices.empty() || !u.mig_uuids.empty()) return;
  uint32_t want = u.gpus;
  for (uint32_t p = 0; p < g.size() && want > 0; ++p)
    if (g[p].mig_uuid.empty() && g[p].healthy && !Has(n.free_gpus, p)) whole->push_back(p), --want;
}

}  // namespace

void VictimRelease::Release(const RunningSnap& r) {
  int64_t end = std::max(r.end_time, st_.now() + 1);
  for (const auto& u : r.nodes) {
    NodeRt* n = st_.FindNode(u.node);
    if (!n) continue;
    Op op{n, {}, {u.cpus, static_cast<int64_t>(u.mem_mib), u.gpus}, end, {}, {}, n->idle};
    std::vector<uint32_t> whole, mig;
    UnitsOf(*n, u, &whole, &mig);
    for (uint32_t p : whole)
      if (!Has(n->free_gpus, p)) InsertSorted(n->free_gpus, p), op.gpus.push_back(p);
    for (uint32_t p : mig)
      if (!Has(n->free_mig, p)) InsertSorted(n->free_mig, p), op.mig.push_back(p);
    op.freed = {u.cpus, static_cast<int64_t>(u.mem_mib),
                static_cast<int64_t>(op.gpus.size() + op.mig.size())};
    st_.RemoveEvent(*n, end, op.event);
    st_.TakeNow(*n, -op.freed);  // free now; the open lists are fixed by Publish
    touched_.push_back(n->index);
    if (n->free.cpus >= n->total.cpus && n->free.mem >= n->total.mem) n->idle = true;
    ops_.push_back(std::move(op));
  }
}

void VictimRelease::Publish() {
  if (touched_.empty()) return;
  std::vector<uint32_t> parts;
  for (uint32_t i : touched_)
    for (uint32_t p : st_.nodes()[i].partitions)
      if (std::find(parts.begin(), parts.end(), p) == parts.end()) parts.push_back(p);
  std::vector<char> in(st_.nodes().size());
  for (uint32_t p : parts)
    for (bool gpu : {false, true}) {
      auto& open = st_.OpenNodes(static_cast<int>(p), gpu);
      std::fill(in.begin(), in.end(), 0);
      for (uint32_t i : open) in[i] = 1;
      for (uint32_t i : touched_) {
        const NodeRt& n = st_.nodes()[i];
        bool member = std::find(n.partitions.begin(), n.partitions.end(), p) != n.partitions.end();
        if (!member || in[i] || n.free.cpus <= 0 || (gpu && n.free.gpus <= 0)) continue;
        open.push_back(i);
        in[i] = 1;
      }
    }
  touched_.clear();
}

void VictimRelease::UndoTo(size_t mark) {
  while (ops_.size() > mark) {
    Op& op = ops_.back();
    NodeRt& n = *op.node;
    st_.TakeNow(n, op.freed);
    for (uint32_t p : op.gpus) Erase(n.free_gpus, p);
    for (uint32_t p : op.mig) Erase(n.free_mig, p);
    st_.AddEvent(n, op.end, op.event);
    n.idle = op.was_idle;
    ops_.pop_back();
  }
}

void VictimRelease::Occupy(const RunningSnap& r) {
  int64_t end = std::max(r.end_time, st_.now() + 1);
  for (const auto& u : r.nodes) {
    NodeRt* n = st_.FindNode(u.node);
    if (!n) continue;
    std::vector<uint32_t> whole, mig;
    if (u.gpu_indices.empty() && u.mig_uuids.empty()) {  // unlisted: any free whole GPUs
      for (size_t i = 0; i < n->free_gpus.size() && whole.size() < u.gpus; ++i)
        whole.push_back(n->free_gpus[i]);
    } else {
      UnitsOf(*n, u, &whole, &mig);
    }
    Amount take{std::min<int64_t>(u.cpus, std::max<int64_t>(0, n->free.cpus)),
                std::min<int64_t>(static_cast<int64_t>(u.mem_mib), std::max<int64_t>(0, n->free.mem)),
                0};
    for (uint32_t p : whole)
      if (Has(n->free_gpus, p)) Erase(n->free_gpus, p), ++take.gpus;
    for (uint32_t p : mig)
      if (Has(n->free_mig, p)) Erase(n->free_mig, p), ++take.gpus;
    if (take.cpus == 0 && take.mem == 0 && take.gpus == 0) continue;
    st_.TakeNow(*n, take);
    st_.AddEvent(*n, end, take);
    n->idle = false;
  }
}

}  // namespace tessera::sched
