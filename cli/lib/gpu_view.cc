#include "cli/lib/gpu_view.h"

#include <algorithm>
#include <map>

#include "cli/lib/info_format.h"
#include "cli/lib/share_view.h"
#include "cli/lib/text_util.h"
#include "common/hostlist.h"

namespace tessera::cli {
namespace {

namespace pb = ::tessera::v1;

bool Unschedulable(pb::NodeState s) {
  return s == pb::NODE_DRAINED || s == pb::NODE_DRAINING || s == pb::NODE_DOWN ||
         s == pb::NODE_FAILED;
}

struct Counts {
  int total = 0, free = 0, alloc = 0, bad = 0, off = 0, mig = 0, mig_slices = 0, mig_used = 0;
  std::map<std::string, std::pair<int, int>> profiles;  // MIG profile -> (instances, free)
  int shared = 0;  // GPUs shared by mps/shard jobs
};

// "0-1:42 3:57": consecutive GPUs of the same job grouped.
std::string JobRuns(const std::map<uint32_t, std::string>& owner) {
  std::string out;
  auto it = owner.begin();
  while (it != owner.end()) {
    auto start = it, last = it;
    while (std::next(last) != owner.end() && std::next(last)->first == last->first + 1 &&
           std::next(last)->second == start->second)
      ++last;
    std::string range = std::to_string(start->first);
    if (last->first != start->first) range += "-" + std::to_string(last->first);
    out += (out.empty() ? "" : " ") + range + ":" + start->second;
    it = std::next(last);
  }
  return out;
}

// Who holds what on one node: whole GPUs by index, MIG instances by UUID (job ids as text).
struct Owners {
  std::map<uint32_t, std::string> gpus;
  std::map<std::string, std::string> mig;
};

// A MIG-mode GPU: 'M' when a job holds one of its instances (counted allocated), 'm' when idle.
// Details: "1:mig[3g.40gb@0:42(MIG-...),3g.40gb@4:-(MIG-...)]".
char MigCell(const pb::GpuDevice& g, bool off, const Owners& own, std::string& detail,
             Counts& c) {
  ++c.mig;
  std::string layout;
  bool used = false;
  for (const auto& m : g.mig_instances()) {
    ++c.mig_slices;
    auto it = own.mig.find(m.uuid());
    std::string job = m.in_use_by_job() ? std::to_string(m.in_use_by_job())
                      : it != own.mig.end() ? it->second : "";
    auto& p = c.profiles[m.profile()];
    ++p.first;
    if (!job.empty()) ++c.mig_used, used = true;
    else if (!off) ++p.second;
    layout += (layout.empty() ? "" : ",") + m.profile() + "@" +
              std::to_string(m.placement_start()) + ":" + (job.empty() ? "-" : job) +
              (m.uuid().empty() ? "" : "(" + m.uuid() + ")");
  }
  detail += (detail.empty() ? "" : " ") + std::to_string(g.index()) + ":mig[" + layout + "]";
  if (used) {
    ++c.alloc;
    return 'M';
  }
  ++(off ? c.off : c.free);
  return off ? '-' : 'm';
}

char Cell(const pb::GpuDevice& g, bool off, const Owners& own, std::string& detail, Counts& c) {
  ++c.total;
  if (!g.healthy()) {
    ++c.bad;
    detail += (detail.empty() ? "" : " ") + std::to_string(g.index()) + ":X(" +
              (g.health_reason().empty() ? "unhealthy" : g.health_reason()) + ")";
    return 'X';
  }
  if (std::string share = ShareOfGpu(g); !share.empty()) {  // shared (mps/shard), not whole
    ++c.shared;
    detail += (detail.empty() ? "" : " ") + share;
    return off ? '-' : 's';
  }
  if (own.gpus.count(g.index())) {
    ++c.alloc;
    return '#';
  }
  if (g.mig_enabled()) return MigCell(g, off, own, detail, c);
  if (off) {
    ++c.off;
    return '-';
  }
  ++c.free;
  return '.';
}

std::string Summary(const Counts& c, int gpu_nodes, int bare_nodes) {
  std::string out = std::to_string(c.total) + " GPUs on " + std::to_string(gpu_nodes) +
                    " nodes: " + std::to_string(c.alloc) + " allocated, " +
                    std::to_string(c.free) + " free, " + std::to_string(c.bad) + " unhealthy, " +
                    std::to_string(c.off) + " not schedulable";
  if (c.mig) {
    out += "; MIG: " + std::to_string(c.mig) + " GPUs, " + std::to_string(c.mig_used) + " of " +
           std::to_string(c.mig_slices) + " instances in use (free/total:";
    for (const auto& [profile, n] : c.profiles)
      out += " " + profile + " " + std::to_string(n.second) + "/" + std::to_string(n.first);
    out += ")";
  }
  if (c.shared) out += "; " + std::to_string(c.shared) + " shared (mps/shard)";
  if (bare_nodes) out += "; " + std::to_string(bare_nodes) + " nodes report no GPUs";
  return out + "\n";
}

}  // namespace

std::string FormatGpuPool(const std::vector<pb::NodeInfo>& nodes,
                          const std::vector<pb::JobInfo>& jobs) {
  std::map<std::string, Owners> owner;  // node -> who holds what
  for (const auto& j : jobs)
    for (const auto& a : j.alloc()) {
      for (uint32_t i : a.gpu_indices()) owner[a.node()].gpus[i] = std::to_string(j.job_id());
      for (const auto& u : a.mig_uuids()) owner[a.node()].mig[u] = std::to_string(j.job_id());
    }
  std::vector<std::string> names;
  std::map<std::string, const pb::NodeInfo*> by_name;
  size_t width = 4;
  for (const auto& n : nodes) {
    names.push_back(n.name());
    by_name[n.name()] = &n;
    width = std::max(width, n.name().size());
  }
  SortHostNames(names);
  std::string out =
      "Legend: . free  # allocated  X unhealthy  - not schedulable (drained/down node)  "
      "m MIG, idle  M MIG, in use";
  bool any_shared = false;
  for (const auto& n : nodes)
    for (const auto& g : n.gpus()) any_shared = any_shared || !ShareOfGpu(g).empty();
  out += any_shared ? "  s shared (mps/shard)\n" : "\n";
  out += PadField("NODE", static_cast<int>(width), false, false) + " STATE GPUS\n";
  Counts c;
  int gpu_nodes = 0, bare_nodes = 0;
  for (const auto& name : names) {
    const pb::NodeInfo& n = *by_name[name];
    std::string line = PadField(name, static_cast<int>(width), false, false) + " " +
                       PadField(NodeStateCompact(n.state()), 5, false, false) + " [";
    if (n.gpus_size() == 0) {
      ++bare_nodes;
      out += line + "]  no GPUs reported\n";
      continue;
    }
    ++gpu_nodes;
    Owners& own = owner[name];
    for (uint32_t i : n.alloc_gpu_indices())
      if (!own.gpus.count(i)) own.gpus[i] = "?";
    bool off = Unschedulable(n.state());
    std::string cells, detail;
    for (const auto& g : n.gpus()) cells += Cell(g, off, own, detail, c);
    std::string jobs_text = JobRuns(own.gpus);
    if (!jobs_text.empty()) detail = jobs_text + (detail.empty() ? "" : " " + detail);
    out += line + cells + "]" + (detail.empty() ? "" : "  " + detail) + "\n";
  }
  return out + Summary(c, gpu_nodes, bare_nodes);
}

}  // namespace tessera::cli
