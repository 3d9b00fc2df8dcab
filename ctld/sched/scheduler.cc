#include "ctld/sched/scheduler.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace tessera::sched {
namespace {

struct FreeNode {
  const NodeSnap* node;
  uint32_t cpus;
  uint64_t mem;
  std::vector<GpuSnap> gpus;  // free, healthy
  NodePlacement used;
};

uint32_t GpusMatching(const FreeNode& f, const std::string& model) {
  uint32_t n = 0;
  for (const auto& g : f.gpus)
    if (model.empty() || g.model == model) ++n;
  return n;
}

void TakeGpus(FreeNode& f, const std::string& model, uint32_t n) {
  for (auto it = f.gpus.begin(); it != f.gpus.end() && n > 0;) {
    if (model.empty() || it->model == model) {
      f.used.gpu_indices.push_back(it->index);
      it = f.gpus.erase(it);
      --n;
    } else {
      ++it;
    }
  }
}

// Memory per task when the job names none: a share proportional to its CPUs.
uint64_t TaskMem(const GroupReq& g, const NodeSnap& n) {
  if (g.per_task.mem_mib || g.per_node.mem_mib) return g.per_task.mem_mib;
  uint32_t cpus = std::max<uint32_t>(1, g.per_task.cpus);
  return n.cpus_total ? n.mem_total * cpus / n.cpus_total : 0;
}

// How many tasks of `g` fit on `f` now (per_node resources included when `fresh`).
uint32_t Capacity(const FreeNode& f, const GroupReq& g, bool fresh) {
  uint32_t cpus = f.cpus, gpus = GpusMatching(f, g.per_task.gpu_model.empty() ? g.per_node.gpu_model : g.per_task.gpu_model);
  uint64_t mem = f.mem;
  if (fresh) {
    if (g.per_node.cpus > cpus || g.per_node.mem_mib > mem || g.per_node.gpus > gpus) return 0;
    cpus -= g.per_node.cpus;
    mem -= g.per_node.mem_mib;
    gpus -= g.per_node.gpus;
  }
  uint64_t cap = std::numeric_limits<uint32_t>::max();
  uint32_t tc = std::max<uint32_t>(1, g.per_task.cpus);
  cap = std::min<uint64_t>(cap, cpus / tc);
  uint64_t tm = TaskMem(g, *f.node);
  if (tm) cap = std::min<uint64_t>(cap, mem / tm);
  if (g.per_task.gpus) cap = std::min<uint64_t>(cap, gpus / g.per_task.gpus);
  if (g.tasks_per_node) cap = std::min<uint64_t>(cap, g.tasks_per_node);
  return static_cast<uint32_t>(cap);
}

void Take(FreeNode& f, const GroupReq& g, uint32_t k, bool fresh) {
  uint32_t cpus = std::max<uint32_t>(1, g.per_task.cpus) * k;
  uint64_t mem = TaskMem(g, *f.node) * k;
  const std::string& model = g.per_task.gpu_model.empty() ? g.per_node.gpu_model : g.per_task.gpu_model;
  uint32_t gpus = g.per_task.gpus * k;
  if (fresh) {
    cpus += g.per_node.cpus;
    mem += g.per_node.mem_mib;
    gpus += g.per_node.gpus;
  }
  f.cpus -= cpus;
  f.mem -= mem;
  f.used.cpus += cpus;
  f.used.mem_mib += mem;
  f.used.tasks += k;
  TakeGpus(f, model, gpus);
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

Result<std::vector<NodePlacement>> Place(const JobSnap& job, const std::vector<const NodeSnap*>& nodes) {
  std::vector<FreeNode> free;
  for (const NodeSnap* n : nodes) {
    if (job.exclusive && !n->idle) continue;
    FreeNode f{n, n->cpus_free, n->mem_free, {}, {}};
    f.used.node = n->name;
    for (const auto& g : n->gpus)
      if (g.free && g.healthy) f.gpus.push_back(g);
    free.push_back(std::move(f));
  }
  std::set<size_t> used_nodes;
  for (const auto& g : job.groups) {
    uint32_t left = g.count;
    uint32_t spread = job.nodes_min > 1 ? (g.count + job.nodes_min - 1) / job.nodes_min : left;
    std::set<size_t> group_nodes;
    // Nodes already in the allocation first, then new ones in order.
    std::vector<size_t> order;
    for (size_t i : used_nodes) order.push_back(i);
    for (size_t i = 0; i < free.size(); ++i)
      if (!used_nodes.count(i)) order.push_back(i);
    for (size_t i : order) {
      if (left == 0) break;
      if (job.nodes_max && !used_nodes.count(i) && used_nodes.size() >= job.nodes_max) continue;
      uint32_t k = std::min({Capacity(free[i], g, true), left, spread});
      if (k == 0) continue;
      Take(free[i], g, k, true);
      left -= k;
      used_nodes.insert(i);
      group_nodes.insert(i);
    }
    if (left > 0) return ResourceExhausted("Resources");
  }
  if (used_nodes.size() < job.nodes_min) return ResourceExhausted("Resources");
  for (const auto& req : job.nodelist) {
    bool found = false;
    for (size_t i : used_nodes) found |= free[i].node->name == req;
    if (!found) return ResourceExhausted("ReqNodeNotAvail");
  }
  std::vector<NodePlacement> out;
  for (size_t i : used_nodes) {
    NodePlacement p = free[i].used;
    if (job.exclusive) {  // the whole node
      p.cpus = free[i].node->cpus_total;
      p.mem_mib = free[i].node->mem_total;
      for (const auto& g : free[i].node->gpus)
        if (std::find(p.gpu_indices.begin(), p.gpu_indices.end(), g.index) == p.gpu_indices.end())
          p.gpu_indices.push_back(g.index);
    }
    std::sort(p.gpu_indices.begin(), p.gpu_indices.end());
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [&](const NodePlacement& a, const NodePlacement& b) {
    auto ia = std::find_if(nodes.begin(), nodes.end(), [&](const NodeSnap* n) { return n->name == a.node; });
    auto ib = std::find_if(nodes.begin(), nodes.end(), [&](const NodeSnap* n) { return n->name == b.node; });
    return ia < ib;
  });
  return out;
}

namespace {

std::vector<const NodeSnap*> Candidates(const JobSnap& job, const ClusterSnapshot& snap, bool ignore_state) {
  std::vector<const NodeSnap*> out;
  for (const auto& n : snap.nodes) {
    if (!ignore_state && !n.schedulable) continue;
    if (!Contains(n.partitions, job.partition)) continue;
    if (Contains(job.exclude, n.name)) continue;
    if (!job.nodelist.empty() && !Contains(job.nodelist, n.name) &&
        job.nodelist.size() >= std::max<uint32_t>(1, job.nodes_min))
      continue;
    out.push_back(&n);
  }
  // Required nodes first so they are picked.
  std::stable_partition(out.begin(), out.end(), [&](const NodeSnap* n) { return Contains(job.nodelist, n->name); });
  return out;
}

}  // namespace

CycleResult RunCycle(const ClusterSnapshot& snap) {
  CycleResult result;
  std::vector<const JobSnap*> order;
  for (const auto& j : snap.pending) order.push_back(&j);
  std::stable_sort(order.begin(), order.end(), [](const JobSnap* a, const JobSnap* b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    if (a->submit_time != b->submit_time) return a->submit_time < b->submit_time;
    return a->id < b->id;
  });
  ClusterSnapshot live = snap;  // free resources shrink as jobs are placed in this cycle
  std::map<std::string, NodeSnap*> by_name;
  for (auto& n : live.nodes) by_name[n.name] = &n;
  for (const JobSnap* job : order) {
    ++result.jobs_considered;
    Decision d;
    d.job_id = job->id;
    auto part = std::find_if(live.partitions.begin(), live.partitions.end(),
                             [&](const PartitionSnap& p) { return p.name == job->partition; });
    if (part != live.partitions.end() && !part->up) {
      d.reason = "PartitionDown";
    } else if (job->begin_time > snap.now) {
      d.reason = "BeginTime";
    } else {
      auto placed = Place(*job, Candidates(*job, live, false));
      if (!placed.ok()) {
        d.reason = placed.status().message();
      } else {
        d.kind = Decision::Kind::kStart;
        d.placement = *placed;
        for (const auto& p : d.placement) {
          NodeSnap* n = by_name[p.node];
          n->cpus_free -= std::min(n->cpus_free, p.cpus);
          n->mem_free -= std::min(n->mem_free, p.mem_mib);
          n->idle = false;
          for (auto& g : n->gpus)
            if (std::find(p.gpu_indices.begin(), p.gpu_indices.end(), g.index) != p.gpu_indices.end()) g.free = false;
        }
      }
    }
    result.decisions.push_back(std::move(d));
  }
  return result;
}

Status CheckSatisfiable(const JobSnap& job, const ClusterSnapshot& empty) {
  auto part = std::find_if(empty.partitions.begin(), empty.partitions.end(),
                           [&](const PartitionSnap& p) { return p.name == job.partition; });
  if (part == empty.partitions.end()) return InvalidArgument("invalid partition specified: " + job.partition);
  if (part->max_nodes && job.nodes_min > part->max_nodes)
    return InvalidArgument("requested " + std::to_string(job.nodes_min) + " nodes but partition " +
                           job.partition + " allows at most " + std::to_string(part->max_nodes));
  for (const auto& n : job.nodelist) {
    auto it = std::find_if(empty.nodes.begin(), empty.nodes.end(), [&](const NodeSnap& s) { return s.name == n; });
    if (it == empty.nodes.end()) return InvalidArgument("invalid node name specified: " + n);
    if (!Contains(it->partitions, job.partition))
      return InvalidArgument("node " + n + " is not in partition " + job.partition);
  }
  auto cands = Candidates(job, empty, true);
  if (cands.size() < std::max<uint32_t>(1, job.nodes_min))
    return InvalidArgument("requested node configuration is not available: partition " + job.partition +
                           " has " + std::to_string(cands.size()) + " usable nodes, job needs " +
                           std::to_string(std::max<uint32_t>(1, job.nodes_min)));
  if (Place(job, cands).ok()) return Status::Ok();
  // Name the part that can never be met: the largest node's per-task fit.
  for (const auto& g : job.groups) {
    bool cpu = false, mem = false, gpu = false;
    for (const NodeSnap* n : cands) {
      cpu |= n->cpus_total >= std::max<uint32_t>(1, g.per_task.cpus) + g.per_node.cpus;
      mem |= n->mem_total >= g.per_task.mem_mib + g.per_node.mem_mib;
      uint32_t have = 0;
      std::string model = g.per_task.gpu_model.empty() ? g.per_node.gpu_model : g.per_task.gpu_model;
      for (const auto& gp : n->gpus) have += model.empty() || gp.model == model;
      gpu |= have >= g.per_task.gpus + g.per_node.gpus;
    }
    if (!cpu) return InvalidArgument("CPU count per task can never be satisfied in partition " + job.partition);
    if (!mem) return InvalidArgument("memory request can never be satisfied in partition " + job.partition);
    if (!gpu) return InvalidArgument("GPU request (gres/gpu) can never be satisfied in partition " + job.partition);
  }
  return InvalidArgument("requested node configuration is not available in partition " + job.partition +
                         " (total CPUs, memory or GPUs of the job exceed what its nodes have)");
}

}  // namespace tessera::sched
