#include "sim/mig.h"

#include <algorithm>

#include "common/mig_profiles.h"

namespace tessera::sim {
namespace {

// The MIG model of a declared GPU (type and memory: a100 + 81920 MiB = A100-80GB).
const MigModel* ModelOf(const GpuDecl& d) { return FindMigModelFor(d.model, d.memory_mib); }

// The first non-media profile of `compute` slices whose memory share matches it, or nullptr.
const MigProfile* ProfileByCompute(const MigModel& m, uint32_t compute) {
  uint32_t slices = compute == 7 ? m.memory_slices : compute == 3 ? 4 : compute;
  for (const auto& p : m.profiles)
    if (p.compute == compute && !p.media_extensions && p.memory_slices == slices) return &p;
  return nullptr;
}

// The mixed static layouts admins use, round-robin over the GPUs: 7g | 4g+3g | 3g+2g+1g+1g |
// 7 x 1g (layouts whose profiles the model lacks are left out).
std::vector<std::vector<std::string>> DefaultLayouts(const MigModel& m) {
  std::vector<std::vector<std::string>> out;
  for (const std::vector<uint32_t>& computes :
       {std::vector<uint32_t>{7}, {4, 3}, {3, 2, 1, 1}, {1, 1, 1, 1, 1, 1, 1}}) {
    std::vector<std::string> layout;
    for (uint32_t c : computes)
      if (const MigProfile* p = ProfileByCompute(m, c)) layout.push_back(p->name);
    if (layout.size() == computes.size()) out.push_back(layout);
  }
  return out;
}

std::string SimMigUuid(const std::string& node, uint32_t gpu, const std::string& profile,
                       uint32_t start) {
  return "MIG-sim-" + node + "-" + std::to_string(gpu) + "-" + profile + "-" + std::to_string(start);
}

// Replaces GPU `g`'s entries in n.gpus by its instances (keeps the list ordered by index).
void ListInstances(sched::NodeSnap& n, const sched::MigGpuSnap& g) {
  auto pos = std::find_if(n.gpus.begin(), n.gpus.end(),
                          [&](const sched::GpuSnap& s) { return s.index > g.index; });
  std::vector<sched::GpuSnap> add;
  for (const auto& i : g.instances) add.push_back({g.index, i.profile, i.free, true, i.uuid});
  n.gpus.insert(pos, add.begin(), add.end());
}

void Unlist(sched::NodeSnap& n, uint32_t gpu) {
  n.gpus.erase(std::remove_if(n.gpus.begin(), n.gpus.end(),
                              [&](const sched::GpuSnap& s) { return s.index == gpu; }),
               n.gpus.end());
}

}  // namespace

MigVariant MigVariantByName(const std::string& name) {
  if (name == "mig-whole") return MigVariant::kWhole;
  if (name == "mig-static") return MigVariant::kStatic;
  if (name == "mig-dynamic") return MigVariant::kDynamic;
  return MigVariant::kNone;
}

std::vector<GpuDecl> DeclsOf(const ClusterConfig& cfg, const std::string& node) {
  auto it = cfg.gpus.find(node);
  if (it != cfg.gpus.end()) return it->second;
  std::vector<GpuDecl> out;  // no gres.conf lines: the node's Gres=gpu:<type>:<n>
  for (const auto& n : cfg.nodes)
    if (n.name == node)
      for (const auto& [model, count] : n.gres_gpus) out.push_back({model, count, 0, false, ""});
  return out;
}

uint64_t WholeGpuMemMib(const ClusterConfig& cfg) {
  for (const auto& n : cfg.nodes)
    for (const auto& d : DeclsOf(cfg, n.name)) {
      if (d.memory_mib) return d.memory_mib;
      if (const MigModel* m = ModelOf(d)) return m->memory_mib;
    }
  return 0;
}

std::vector<std::vector<std::string>> ParseMigLayouts(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> cur;
  std::string tok;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ';';
    if (c != ',' && c != ';') { tok += c; continue; }
    if (!tok.empty()) cur.push_back(tok);
    tok.clear();
    if (c == ';' && !cur.empty()) out.push_back(std::move(cur)), cur.clear();
  }
  return out;
}

Status ApplyMigVariant(const ClusterConfig& cfg, MigVariant v,
                       const std::vector<std::vector<std::string>>& static_layouts,
                       std::vector<sched::NodeSnap>& nodes) {
  size_t turn = 0;  // round-robin over the layouts, cluster-wide
  for (auto& n : nodes) {
    uint32_t index = 0;
    for (const auto& d : DeclsOf(cfg, n.name)) {
      const MigModel* m = ModelOf(d);
      for (uint32_t k = 0; k < d.count; ++k, ++index) {
        if (!m) continue;
        sched::MigGpuSnap g;
        g.index = index;
        g.mig_model = m->name;
        g.dynamic = v == MigVariant::kDynamic;
        if (v == MigVariant::kStatic) {
          auto layouts = static_layouts.empty() ? DefaultLayouts(*m) : static_layouts;
          if (layouts.empty()) return InvalidArgument(std::string("no static MIG layout for ") + m->name);
          auto layout = PlaceMigProfiles(*m, {}, layouts[turn++ % layouts.size()]);
          if (!layout.ok())
            return InvalidArgument(n.name + " GPU " + std::to_string(index) + ": " + layout.status().message());
          g.mig_enabled = true;
          for (const auto& p : *layout)
            g.instances.push_back({p.profile, p.start, SimMigUuid(n.name, index, p.profile, p.start), true});
          Unlist(n, index);
          ListInstances(n, g);
        }
        if (v == MigVariant::kDynamic) {  // MIG mode on, no instances yet: cut on demand
          g.mig_enabled = true;
          Unlist(n, index);
        }
        n.mig_gpus.push_back(std::move(g));
      }
    }
  }
  return Status::Ok();
}

uint64_t ProfileMemMib(const std::string& name) { return MigProfileMemoryMiB(name); }

uint64_t UsefulGpuMemMib(const TraceJob& t, uint64_t whole_gpu_mem_mib) {
  uint64_t per = t.gpu_mem_mib ? t.gpu_mem_mib : ProfileMemMib(t.gpu_model);
  return uint64_t{t.gpus} * (per ? per : whole_gpu_mem_mib);
}

void ApplyMigVariant(MigVariant v, std::vector<TraceJob>& trace) {
  if (v != MigVariant::kWhole) return;
  for (auto& t : trace)
    if (uint64_t per = ProfileMemMib(t.gpu_model)) {
      t.gpu_mem_mib = per;
      t.gpu_model.clear();
    }
}

sched::ClusterSnapshot DynamicMigCapacity(sched::ClusterSnapshot empty, const std::string& profile) {
  for (auto& n : empty.nodes)
    for (const auto& g : n.mig_gpus) {
      const MigModel* m = g.dynamic ? FindMigModel(g.mig_model) : nullptr;
      const MigProfile* p = m ? FindMigProfile(*m, profile) : nullptr;
      for (uint32_t k = p ? MigEmptyCapacity(*m, *p) : 0; k > 0; --k)
        n.gpus.push_back({g.index, profile, true, true, "MIG-capacity"});
    }
  return empty;
}

void MigLive::Use(sched::NodeSnap& n, const sched::NodePlacement& p, bool take) {
  for (const auto& u : p.mig_uuids) {
    for (auto& g : n.gpus)
      if (g.mig_uuid == u) g.free = !take;
    for (auto& mg : n.mig_gpus)
      for (auto& i : mg.instances)
        if (i.uuid == u) i.free = !take;
  }
  for (uint32_t idx : p.gpu_indices)
    for (auto& mg : n.mig_gpus)
      if (mg.index == idx && !mg.mig_enabled) mg.busy = take;
}

void MigLive::Begin(sched::NodeSnap& n, const sched::MigReconfig& r) {
  for (auto& mg : n.mig_gpus)
    if (mg.index == r.gpu_index) mg.busy = true;
  Unlist(n, r.gpu_index);
}

void MigLive::Finish(sched::NodeSnap& n, const sched::MigReconfig& r) {
  for (auto& mg : n.mig_gpus) {
    if (mg.index != r.gpu_index) continue;
    auto& inst = mg.instances;
    inst.erase(std::remove_if(inst.begin(), inst.end(),
                              [&](const sched::MigInstanceSnap& i) {
                                return std::count(r.destroy.begin(), r.destroy.end(), i.uuid) > 0;
                              }),
               inst.end());
    for (const auto& [profile, start] : r.create)
      inst.push_back({profile, start, SimMigUuid(n.name, mg.index, profile, start), true});
    std::sort(inst.begin(), inst.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    mg.mig_enabled = true;
    mg.busy = false;
    ListInstances(n, mg);
  }
}

}  // namespace tessera::sim
