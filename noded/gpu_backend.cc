#include "noded/gpu_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/config_check.h"
#include "common/hostlist.h"
#include "noded/job_status.h"

namespace tessera::noded {
namespace {

uint64_t Fnv1a(const std::string& s, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string UuidBody(const std::string& key) {
  uint64_t hi = Fnv1a(key, 14695981039346656037ULL);
  uint64_t lo = Fnv1a(key + "#2", hi ^ 0x9e3779b97f4a7c15ULL);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(hi >> 32), static_cast<unsigned>((hi >> 16) & 0xffff),
                static_cast<unsigned>(hi & 0xffff), static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Full layout from "profile[@start]" items (common/config_check.h).
Result<std::vector<MigPlacement>> LayoutFromItems(const MigModel& m,
                                                  const std::vector<std::string>& items) {
  return MigLayoutFromItems(m, items);
}

}  // namespace

std::string SimulatedGpuUuid(const std::string& cluster, const std::string& node, uint32_t index) {
  return "GPU-" + UuidBody(cluster + '\0' + node + '\0' + std::to_string(index));
}

std::string SimulatedMigUuid(const std::string& gpu_uuid, const std::string& profile,
                             uint32_t start) {
  return "MIG-" + UuidBody(gpu_uuid + '\0' + profile + '\0' + std::to_string(start));
}

std::vector<MigInstanceInfo> SimulatedMigInstances(const GpuInfo& g,
                                                   const std::vector<MigPlacement>& layout) {
  std::vector<MigInstanceInfo> out;
  const MigModel* m = FindMigModelFor(g.model, g.memory_mib);
  uint32_t gi = 1;
  for (const auto& p : layout) {
    const MigProfile* prof = m ? FindMigProfile(*m, p.profile) : nullptr;
    out.push_back({p.profile, p.start, prof ? prof->memory_slices : 0,
                   SimulatedMigUuid(g.uuid, p.profile, p.start), gi++});
  }
  return out;
}

Result<std::vector<SimGpuOptions>> ParseSimGpuOptions(const std::vector<ConfigLine>& gres,
                                                      const std::string& node) {
  std::vector<SimGpuOptions> out;
  for (const auto& l : gres) {
    const std::string* name = l.Find("name");
    const std::string* nodes = l.Find("nodename");
    if (!name || *name != "gpu" || !nodes) continue;
    auto hosts = ExpandHostlist(*nodes);
    if (!hosts.ok()) return InvalidArgument(l.Where() + ": " + hosts.status().message());
    bool mine = false;
    for (const auto& h : *hosts) mine = mine || h == node;
    if (!mine) continue;
    SimGpuOptions o;
    for (const auto& p : l.pairs) {
      auto yes = [&](bool* v) -> Status {
        std::string s = ToLower(p.value);
        if (s == "yes" || s == "true" || s == "1") return *v = true, Status::Ok();
        if (s == "no" || s == "false" || s == "0") return *v = false, Status::Ok();
        return InvalidArgument(l.Where() + ": " + p.raw_key + "=" + p.value + ": expected yes/no");
      };
      auto num = [&](int64_t max, int64_t* v) -> Status {
        if (p.value.empty() || p.value.size() > 6 ||
            p.value.find_first_not_of("0123456789") != std::string::npos || std::stoll(p.value) > max)
          return InvalidArgument(l.Where() + ": " + p.raw_key + "=" + p.value +
                                 ": expected 0.." + std::to_string(max));
        *v = std::stoll(p.value);
        return Status::Ok();
      };
      int64_t n = 0;
      if (p.key == "migenabled") {
        TESSERA_RETURN_IF_ERROR(yes(&o.mig_enabled));
      } else if (p.key == "miglayout") {
        o.mig_layout = Split(p.value, ',');
      } else if (p.key == "mps") {
        TESSERA_RETURN_IF_ERROR(yes(&o.mps));
      } else if (p.key == "replicas") {
        TESSERA_RETURN_IF_ERROR(num(64, &n));
        o.replicas = static_cast<uint32_t>(n);
      } else if (p.key == "numanode") {
        TESSERA_RETURN_IF_ERROR(num(1024, &n));
        o.numa_node = static_cast<int32_t>(n);
      }
    }
    if (!o.mig_layout.empty() && !o.mig_enabled)
      return InvalidArgument(l.Where() + ": MigLayout= needs MigEnabled=yes");
    out.push_back(std::move(o));
  }
  return out;
}

SimulatedGpuBackend::SimulatedGpuBackend(std::string cluster_name, std::string node,
                                         std::vector<GpuDecl> decls,
                                         std::vector<SimGpuOptions> options, std::string state_dir)
    : cluster_(std::move(cluster_name)), node_(std::move(node)), decls_(std::move(decls)),
      options_(std::move(options)), state_dir_(std::move(state_dir)) {}

namespace {

std::string LayoutText(const std::vector<MigPlacement>& layout) {
  std::vector<std::string> items;
  for (const auto& p : layout) items.push_back(p.profile + "@" + std::to_string(p.start));
  std::sort(items.begin(), items.end());
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out.empty() ? "(none)" : out;
}

}  // namespace

// The layout of GPU `g` (declared at `d.where` with options `o`): the saved one
// (<state_dir>/gpu.<i>.mig, written by the last reconfiguration) wins over gres.conf's
// MigLayout=; which one won is noted when they differ. A saved layout that is not valid for the
// model is noted and gres.conf's is used.
Result<std::vector<MigPlacement>> SimulatedGpuBackend::LayoutFor(const GpuDecl& d,
                                                                  const SimGpuOptions& o,
                                                                  const MigModel& model,
                                                                  uint32_t index) {
  std::string gpu = "GPU " + std::to_string(index);
  auto configured = LayoutFromItems(model, o.mig_layout);
  std::string saved_path =
      state_dir_.empty() ? "" : state_dir_ + "/gpu." + std::to_string(index) + ".mig";
  std::ifstream f(saved_path);
  if (saved_path.empty() || !f) {
    if (!configured.ok())
      return InvalidArgument(d.where + ": MigLayout for " + gpu + ": " +
                             configured.status().message());
    return configured;
  }
  std::string line;
  std::getline(f, line);
  auto saved = LayoutFromItems(model, Split(line, ','));
  if (!saved.ok()) {
    notes_.push_back(gpu + ": the saved MIG layout in " + saved_path + " is not valid (" +
                     saved.status().message() + "); using gres.conf's MigLayout (" + d.where +
                     ")");
    if (!configured.ok())
      return InvalidArgument(d.where + ": MigLayout for " + gpu + ": " +
                             configured.status().message());
    return configured;
  }
  std::string want = configured.ok() ? LayoutText(*configured) : "(invalid)";
  if (want != LayoutText(*saved))
    notes_.push_back(gpu + ": MIG layout " + LayoutText(*saved) + " saved in " + saved_path +
                     " (the last reconfiguration) wins over gres.conf's MigLayout " + want +
                     " (" + d.where + "); remove that file to use gres.conf's");
  return saved;
}

Status SimulatedGpuBackend::Build() {
  std::vector<GpuInfo> out;
  notes_.clear();
  for (size_t di = 0; di < decls_.size(); ++di) {
    const GpuDecl& d = decls_[di];
    if (!d.simulated) continue;
    SimGpuOptions o = di < options_.size() ? options_[di] : SimGpuOptions{};
    const MigModel* model = FindMigModelFor(d.model, d.memory_mib);
    for (uint32_t i = 0; i < d.count; ++i) {
      GpuInfo g;
      g.index = static_cast<uint32_t>(out.size());
      g.uuid = SimulatedGpuUuid(cluster_, node_, g.index);
      g.model = d.model;
      g.memory_mib = d.memory_mib;
      g.simulated = true;
      g.minor = g.index;
      g.numa_node = o.numa_node;
      g.mps = o.mps;
      g.replicas = o.replicas;
      g.mig_enabled = o.mig_enabled;
      // A bad GPU line costs only its own GPUs: they are reported unhealthy with the reason
      // (file:line), the rest of the node works.
      Status bad = Status::Ok();
      if (o.mig_enabled && !model) {
        bad = InvalidArgument(d.where + ": MigEnabled=yes but GPU type '" + d.model +
                              "' has no known MIG profiles");
      } else if (o.mig_enabled) {
        auto layout = LayoutFor(d, o, *model, g.index);
        if (layout.ok()) g.mig = SimulatedMigInstances(g, *layout);
        else bad = layout.status();
      }
      if (!bad.ok()) {
        g.healthy = false;
        g.health_reason = bad.message();
        notes_.push_back("GPU " + std::to_string(g.index) + " reported unhealthy: " +
                         bad.message());
      }
      out.push_back(std::move(g));
    }
  }
  gpus_ = std::move(out);
  built_ = true;
  return Status::Ok();
}

std::vector<std::string> SimulatedGpuBackend::TakeNotes() {
  std::vector<std::string> out;
  out.swap(notes_);
  return out;
}

Result<std::vector<GpuInfo>> SimulatedGpuBackend::Discover() {
  if (!built_) TESSERA_RETURN_IF_ERROR(Build());
  return gpus_;
}

Status SimulatedGpuBackend::SaveLayout(const GpuInfo& g) const {
  if (state_dir_.empty()) return Status::Ok();
  std::string line;
  for (const auto& m : g.mig)
    line += (line.empty() ? "" : ",") + m.profile + "@" + std::to_string(m.start);
  return WriteFileAtomic(state_dir_ + "/gpu." + std::to_string(g.index) + ".mig", line + "\n");
}

Status SimulatedGpuBackend::ConfigureMig(uint32_t index, const std::vector<MigPlacement>& create,
                                         const std::vector<std::string>& destroy) {
  if (!built_) TESSERA_RETURN_IF_ERROR(Build());
  if (index >= gpus_.size())
    return InvalidArgument("no GPU " + std::to_string(index) + " on this node");
  GpuInfo& g = gpus_[index];
  if (!g.mig_enabled) return FailedPrecondition("GPU " + std::to_string(index) + " is not in MIG mode");
  const MigModel* model = FindMigModelFor(g.model, g.memory_mib);
  if (!model) return FailedPrecondition("GPU " + std::to_string(index) + ": no MIG profile table for '" + g.model + "'");
  std::vector<MigPlacement> layout;
  for (const auto& d : destroy) {
    bool found = false;
    for (const auto& m : g.mig) found = found || m.uuid == d;
    if (!found) return NotFound("GPU " + std::to_string(index) + " has no MIG instance " + d);
  }
  for (const auto& m : g.mig) {
    bool gone = false;
    for (const auto& d : destroy) gone = gone || m.uuid == d;
    if (!gone) layout.push_back({m.profile, m.start});
  }
  layout.insert(layout.end(), create.begin(), create.end());
  TESSERA_RETURN_IF_ERROR(ValidateMigLayout(*model, layout));
  std::vector<MigInstanceInfo> next;
  for (const auto& m : g.mig) {
    bool gone = false;
    for (const auto& d : destroy) gone = gone || m.uuid == d;
    if (!gone) next.push_back(m);
  }
  uint32_t gi = 1;
  for (const auto& m : next) gi = std::max(gi, m.gpu_instance_id + 1);
  for (auto inst : SimulatedMigInstances(g, create)) {
    inst.gpu_instance_id = gi++;
    next.push_back(inst);
  }
  std::vector<MigInstanceInfo> old = g.mig;
  g.mig = next;
  Status st = SaveLayout(g);
  if (!st.ok()) g.mig = old;
  return st;
}

std::vector<GpuEvent> SimulatedGpuBackend::PollEvents(int timeout_ms) {
  std::vector<GpuEvent> out;
  if (state_dir_.empty()) return out;
  for (uint32_t i = 0; i < gpus_.size(); ++i) {
    std::string path = state_dir_ + "/inject-xid." + std::to_string(i);
    std::ifstream f(path);
    if (!f) continue;
    std::string what;
    f >> what;
    ::unlink(path.c_str());
    GpuEvent e{i, 0, false};
    if (what == "lost")
      e.lost = true;
    else if (!what.empty() && what.size() < 6 &&
             what.find_first_not_of("0123456789") == std::string::npos)
      e.xid = static_cast<uint32_t>(std::stoul(what));
    else
      continue;
    out.push_back(e);
  }
  (void)timeout_ms;  // files are polled; the caller's loop provides the pacing
  return out;
}

}  // namespace tessera::noded
