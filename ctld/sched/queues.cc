#include "ctld/sched/queues.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tessera::sched {
namespace {

constexpr double kEps = 1e-6;
constexpr int kDims = 4;  // CPUs, memory MiB, GPU units, nodes

void FromTres(const TresLimit& t, double out[kDims]) {
  out[0] = double(t.cpu), out[1] = double(t.mem_mib), out[2] = double(t.gpu), out[3] = double(t.node);
}

std::string TresValue(int k, double v) {  // as GrpTRES writes it: memory in MiB ("M")
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.0f%s", v, k == 1 ? "M" : "");
  return buf;
}

std::string TresItem(int k, double v) {
  static const char* kName[kDims] = {"cpu", "mem", "gres/gpu", "node"};
  return std::string(kName[k]) + "=" + TresValue(k, v);
}

bool HasQueueSettings(const AccountConfig& a) {
  return !a.guarantee.Unlimited() || !a.limit.Unlimited() || a.weight != 1 || !a.reclaimable;
}

QueueTres Round(const double v[kDims], bool none_is_minus_one) {
  auto r = [&](double x) -> int64_t {
    if (none_is_minus_one && x < 0) return -1;
    return static_cast<int64_t>(std::floor(x + kEps));
  };
  return {r(v[0]), r(v[1]), r(v[2])};
}

}  // namespace

QueueAmount HeldBy(const RunningSnap& r) {
  QueueAmount a;
  for (const auto& u : r.nodes) a += {int64_t(u.cpus), int64_t(u.mem_mib), int64_t(u.gpus), 1};
  return a;
}

QueueAmount PlacedAmount(const std::vector<NodePlacement>& p) {
  QueueAmount a;
  for (const auto& n : p)
    a += {int64_t(n.cpus), int64_t(n.mem_mib), int64_t(n.gpu_indices.size() + n.mig_uuids.size()), 1};
  return a;
}

QueueAmount Requested(const JobSnap& j, const Amount& total) {
  return {total.cpus, total.mem, total.gpus, std::max<int64_t>(1, j.nodes_min)};
}

void QueueTable::ToArray(const QueueAmount& a, double out[kDims]) const {
  out[0] = double(a.cpus), out[1] = double(a.mem), out[2] = double(a.gpus);
  out[3] = count_nodes_ ? double(a.nodes) : 0;
}

bool QueuesActive(const SchedConfig& c) {
  for (const auto& [name, a] : c.accounts)
    if (HasQueueSettings(a)) return true;
  return false;
}

void QueueSteps(std::vector<std::string>& plugins, std::vector<std::string>& actions) {
  if (std::find(plugins.begin(), plugins.end(), "queue") == plugins.end())
    plugins.insert(plugins.begin(), "queue");
  if (std::find(actions.begin(), actions.end(), "reclaim") != actions.end()) return;
  auto it = std::find(actions.begin(), actions.end(), "allocate");
  actions.insert(it == actions.end() ? actions.end() : it + 1, "reclaim");
}

int QueueTable::Find(const std::string& account) const {
  auto it = index_.find(account);
  return it == index_.end() ? -1 : it->second;
}

int QueueTable::Add(const std::string& name, const SchedConfig& cfg) {
  if (int q = Find(name); q >= 0) return q;
  int id = static_cast<int>(nodes_.size());
  index_[name] = id;
  nodes_.emplace_back();
  nodes_.back().name = name;
  auto it = cfg.accounts.find(name);
  if (it == cfg.accounts.end()) return id;
  const AccountConfig& a = it->second;
  int parent = -1;
  if (!a.parent.empty() && a.parent != "root" && a.parent != name && nodes_.size() < 100000)
    parent = Add(a.parent, cfg);  // (a cycle ends at the second visit: Find answers)
  Node& n = nodes_[static_cast<size_t>(id)];
  n.cfg = &a;
  n.parent = parent;
  FromTres(a.guarantee, n.guarantee);
  FromTres(a.limit, n.limit);
  count_nodes_ |= a.guarantee.node >= 0 || a.limit.node >= 0;
  n.weight = a.weight;
  n.reclaimable = a.reclaimable;
  return id;
}

void QueueTable::Build(const SchedConfig& cfg, const ClusterSnapshot& snap,
                       const std::vector<std::pair<const std::string*, QueueAmount>>& demand) {
  for (const auto& [name, a] : cfg.accounts)
    if (name != "root") Add(name, cfg);
  std::vector<int> run_q, dem_q;
  for (const auto& r : snap.running) run_q.push_back(Add(r.account, cfg));
  for (const auto& d : demand) dem_q.push_back(Add(*d.first, cfg));
  for (size_t i = 0; i < nodes_.size(); ++i) {  // a parent cycle (bad data) is cut
    size_t steps = 0;
    for (int q = nodes_[i].parent; q >= 0 && steps <= nodes_.size(); q = nodes_[size_t(q)].parent) ++steps;
    if (steps > nodes_.size()) nodes_[i].parent = -1;
  }
  for (size_t i = 0; i < snap.running.size(); ++i) Charge(run_q[i], HeldBy(snap.running[i]));
  for (auto& n : nodes_) std::copy(n.alloc, n.alloc + kDims, n.start);
  for (size_t i = 0; i < demand.size(); ++i) {
    double d[kDims];
    ToArray(demand[i].second, d);
    for (int q = dem_q[i]; q >= 0; q = nodes_[size_t(q)].parent)
      for (int k = 0; k < kDims; ++k) nodes_[size_t(q)].pending[k] += d[k];
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    int p = nodes_[i].parent;
    if (p >= 0) nodes_[size_t(p)].children.push_back(int(i));
    else tops_.push_back(int(i));
  }
  double cap[kDims] = {0, 0, 0, 0};
  for (const auto& n : snap.nodes) {
    if (!n.schedulable) continue;
    cap[0] += n.cpus_total, cap[1] += double(n.mem_total), cap[3] += 1;
    for (const auto& g : n.gpus) cap[2] += g.healthy ? 1 : 0;
  }
  for (auto& n : nodes_) std::copy(n.guarantee, n.guarantee + kDims, n.effective);
  Scale(tops_, cap, "the top level");
  Divide(tops_, cap);
}

// Guarantees of siblings that sum over what they share (the cluster's schedulable capacity
// for the top level; for children, their parent's effective guarantee, else what the parent's
// level shares) are scaled down in proportion, as KAI Scheduler and Kueue users expect when a
// cluster shrinks; each scaling is a warning.
void QueueTable::Scale(const std::vector<int>& kids, const double cap[kDims], const std::string& level) {
  if (kids.empty()) return;
  for (int k = 0; k < kDims; ++k) {
    double sum = 0;
    for (int q : kids) sum += std::max(nodes_[size_t(q)].guarantee[k], 0.0);
    if (sum <= cap[k] + kEps || sum <= 0) continue;
    double f = cap[k] / sum;
    for (int q : kids)
      if (nodes_[size_t(q)].guarantee[k] >= 0) nodes_[size_t(q)].effective[k] = nodes_[size_t(q)].guarantee[k] * f;
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2f", f);
    warnings_.push_back("queues: the guarantees under " + level + " sum to " + TresItem(k, sum) +
                        ", over the " + TresValue(k, cap[k]) +
                        " there are; scaled by " + ratio);
  }
  for (int q : kids) {
    const Node& n = nodes_[size_t(q)];
    double sub[kDims];
    for (int k = 0; k < kDims; ++k) sub[k] = n.effective[k] >= 0 ? n.effective[k] : cap[k];
    Scale(n.children, sub, n.name);
  }
}

// Water filling among siblings, per resource (see the header).
void QueueTable::Divide(const std::vector<int>& kids, const double cap[kDims]) {
  if (kids.empty()) return;
  for (int k = 0; k < kDims; ++k) {
    std::vector<double> want(kids.size());
    double left = cap[k];
    for (size_t i = 0; i < kids.size(); ++i) {
      Node& n = nodes_[size_t(kids[i])];
      want[i] = n.start[k] + n.pending[k];
      if (n.limit[k] >= 0) want[i] = std::min(want[i], n.limit[k]);
      n.deserved[k] = std::min(std::max(n.effective[k], 0.0), want[i]);
      left -= n.deserved[k];
    }
    for (size_t round = 0; round <= kids.size() && left > kEps; ++round) {
      double weights = 0;
      for (size_t i = 0; i < kids.size(); ++i) {
        const Node& n = nodes_[size_t(kids[i])];
        if (n.deserved[k] + kEps < want[i]) weights += n.weight;
      }
      if (weights <= 0) break;
      double given = 0;
      for (size_t i = 0; i < kids.size(); ++i) {
        Node& n = nodes_[size_t(kids[i])];
        if (n.deserved[k] + kEps >= want[i]) continue;
        double g = std::min(left * n.weight / weights, want[i] - n.deserved[k]);
        n.deserved[k] += g;
        given += g;
      }
      left -= given;
      if (given <= kEps) break;
    }
  }
  for (int q : kids) Divide(nodes_[size_t(q)].children, nodes_[size_t(q)].deserved);
}

void QueueTable::Charge(int q, const QueueAmount& a) {
  double d[kDims];
  ToArray(a, d);
  for (; q >= 0; q = nodes_[size_t(q)].parent)
    for (int k = 0; k < kDims; ++k) nodes_[size_t(q)].alloc[k] += d[k];
}

std::string QueueTable::OverLimit(int q, const QueueAmount& add) const {
  double d[kDims];
  ToArray(add, d);
  static const char* kReason[kDims] = {"AssocGrpCpuLimit", "AssocGrpMemLimit", "AssocGrpGRES",
                                       "AssocGrpNodeLimit"};
  for (; q >= 0; q = nodes_[size_t(q)].parent) {
    const Node& n = nodes_[size_t(q)];
    for (int k : {2, 0, 1, 3})
      if (n.limit[k] >= 0 && d[k] > 0 && n.alloc[k] + d[k] > n.limit[k] + kEps) return kReason[k];
  }
  return "";
}

bool QueueTable::Starved(int q, const QueueAmount& add, int stop) const {
  double d[kDims];
  ToArray(add, d);
  for (; q >= 0 && q != stop; q = nodes_[size_t(q)].parent) {
    const Node& n = nodes_[size_t(q)];
    for (int k = 0; k < kDims; ++k)
      if (d[k] > 0 && n.alloc[k] + d[k] > n.deserved[k] + kEps) return false;
  }
  return true;
}

int QueueTable::CommonAncestor(int a, int b) const {
  std::vector<int> up;
  for (int q = a; q >= 0; q = nodes_[size_t(q)].parent) up.push_back(q);
  for (int q = b; q >= 0; q = nodes_[size_t(q)].parent)
    if (std::find(up.begin(), up.end(), q) != up.end()) return q;
  return -1;
}

void QueueTable::BeginSearch(int reclaimer, const QueueAmount& job) {
  for (int q : touched_) std::fill(nodes_[size_t(q)].removed, nodes_[size_t(q)].removed + kDims, 0.0);
  touched_.clear();
  reclaimer_ = reclaimer;
  ToArray(job, job_);
}

bool QueueTable::VictimAllowed(int victim, const QueueAmount& held) {
  if (victim < 0 || reclaimer_ < 0) return false;
  int stop = CommonAncestor(reclaimer_, victim);
  if (stop == victim || stop == reclaimer_) return false;  // its own queue or an ancestor's
  QueueAmount job{int64_t(job_[0]), int64_t(job_[1]), int64_t(job_[2]), int64_t(job_[3])};
  if (!Starved(reclaimer_, job, stop)) return false;
  double h[kDims];
  ToArray(held, h);
  for (int q = victim; q >= 0 && q != stop; q = nodes_[size_t(q)].parent) {
    const Node& n = nodes_[size_t(q)];
    if (!n.reclaimable) return false;
    bool relieves = false;
    for (int k = 0; k < kDims; ++k) {
      if (job_[k] <= 0 || n.alloc[k] <= n.deserved[k] + kEps) continue;  // not over here
      if (n.alloc[k] - n.removed[k] - h[k] < n.deserved[k] - kEps) return false;
      relieves |= h[k] > 0;
    }
    if (!relieves) return false;
  }
  for (int q = victim; q >= 0 && q != stop; q = nodes_[size_t(q)].parent) {
    for (int k = 0; k < kDims; ++k) nodes_[size_t(q)].removed[k] += h[k];
    touched_.push_back(q);
  }
  return true;
}

std::vector<QueueShare> QueueTable::Shares() const {
  std::vector<QueueShare> out;
  std::vector<std::pair<int, uint32_t>> stack;  // (node, depth), depth-first, names ascending
  auto push = [&](std::vector<int> ids, uint32_t depth) {
    std::sort(ids.begin(), ids.end(), [&](int a, int b) { return nodes_[size_t(a)].name > nodes_[size_t(b)].name; });
    for (int q : ids) stack.push_back({q, depth});
  };
  push(tops_, 0);
  while (!stack.empty()) {
    auto [q, depth] = stack.back();
    stack.pop_back();
    QueueShare s = Share(q);
    s.depth = depth;
    out.push_back(std::move(s));
    push(nodes_[size_t(q)].children, depth + 1);
  }
  return out;
}

QueueShare QueueTable::Share(int q) const {
  const Node& n = nodes_[size_t(q)];
  QueueShare s;
  s.account = n.name;
  s.parent = n.parent >= 0 ? nodes_[size_t(n.parent)].name : "";
  s.guarantee = Round(n.guarantee, true);
  s.limit = Round(n.limit, true);
  s.weight = n.weight;
  s.reclaimable = n.reclaimable;
  s.allocated = Round(n.start, false);
  s.pending = Round(n.pending, false);
  s.deserved = Round(n.deserved, false);
  return s;
}

}  // namespace tessera::sched
