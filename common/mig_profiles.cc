// MIG profile tables. Restated from NVIDIA's MIG User Guide, "Supported MIG Profiles"
// (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html) and
// "Concepts" (4g+3g before R510), NVML's nvmlGpuInstancePlacement_t
// (https://docs.nvidia.com/deploy/nvml-api/structnvmlGpuInstancePlacement__t.html), with the
// placements confirmed by real `nvidia-smi mig -lgipp` captures as collected (with per-entry
// sources and confidence) in the project's shared/data/mig/README.md and profiles.json
// (schema tessera-mig-profiles/1). H200 placements are inferred there from H100 (identical
// profile ids, counts and memory fractions). Columns: name, compute slices, memory slices
// (placement size), max instances, allowed starts, NVML_GPU_INSTANCE_PROFILE_* value, +me.
#include "common/mig_profiles.h"

#include <algorithm>
#include <map>

#include "common/config_file.h"

namespace tessera {

const std::vector<MigModel>& MigModels() {
  static const std::vector<MigModel> kModels = {
  {"A100-SXM4-40GB",
   {"a100", "a100-40gb", "a100-pcie-40gb", "a100-sxm4-40gb", "a800-40gb"},
   8, 7, 40960,
   {
      {"1g.5gb", 1, 1, 7, {0,1,2,3,4,5,6}, 0, false},
      {"1g.5gb+me", 1, 1, 1, {0,1,2,3,4,5,6}, 7, true},
      {"1g.10gb", 1, 2, 4, {0,2,4,6}, 9, false},
      {"2g.10gb", 2, 2, 3, {0,2,4}, 1, false},
      {"3g.20gb", 3, 4, 2, {0,4}, 2, false},
      {"4g.20gb", 4, 4, 1, {0}, 3, false},
      {"7g.40gb", 7, 8, 1, {0}, 4, false},
   },
   {},
   {"4g.20gb","3g.20gb"}},
  {"A100-80GB",
   {"a100 80gb pcie", "a100-80gb", "a100-pcie-80gb", "a100-sxm4-80gb", "a800 80gb pcie", "a800-80gb"},
   8, 7, 81920,
   {
      {"1g.10gb", 1, 1, 7, {0,1,2,3,4,5,6}, 0, false},
      {"1g.10gb+me", 1, 1, 1, {0,1,2,3,4,5,6}, 7, true},
      {"1g.20gb", 1, 2, 4, {0,2,4,6}, 9, false},
      {"2g.20gb", 2, 2, 3, {0,2,4}, 1, false},
      {"3g.40gb", 3, 4, 2, {0,4}, 2, false},
      {"4g.40gb", 4, 4, 1, {0}, 3, false},
      {"7g.80gb", 7, 8, 1, {0}, 4, false},
   },
   {},
   {"4g.40gb","3g.40gb"}},
  {"A30-24GB",
   {"a30", "a30-24gb", "a30-pcie-24gb"},
   4, 4, 24576,
   {
      {"1g.6gb", 1, 1, 4, {0,1,2,3}, 0, false},
      {"1g.6gb+me", 1, 1, 1, {0,1,2,3}, 7, true},
      {"2g.12gb", 2, 2, 2, {0,2}, 1, false},
      {"2g.12gb+me", 2, 2, 1, {0,2}, 8, true},
      {"4g.24gb", 4, 4, 1, {0}, 3, false},
   },
   {{"1g.6gb+me","2g.12gb+me"}},
   {}},
  {"H100-80GB",
   {"h100", "h100 80gb hbm3", "h100 pcie", "h100-80gb", "h100-pcie-80gb", "h100-sxm5-80gb", "h800-80gb"},
   8, 7, 81920,
   {
      {"1g.10gb", 1, 1, 7, {0,1,2,3,4,5,6}, 0, false},
      {"1g.10gb+me", 1, 1, 1, {0,1,2,3,4,5,6}, 7, true},
      {"1g.20gb", 1, 2, 4, {0,2,4,6}, 9, false},
      {"2g.20gb", 2, 2, 3, {0,2,4}, 1, false},
      {"3g.40gb", 3, 4, 2, {0,4}, 2, false},
      {"4g.40gb", 4, 4, 1, {0}, 3, false},
      {"7g.80gb", 7, 8, 1, {0}, 4, false},
   },
   {},
   {}},
  {"H100-NVL-94GB",
   {"h100 nvl", "h100-94gb", "h100-nvl", "h100-nvl-94gb", "h100-pcie-94gb", "h100-sxm5-94gb", "h800 nvl"},
   8, 7, 96256,
   {
      {"1g.12gb", 1, 1, 7, {0,1,2,3,4,5,6}, 0, false},
      {"1g.12gb+me", 1, 1, 1, {0,1,2,3,4,5,6}, 7, true},
      {"1g.24gb", 1, 2, 4, {0,2,4,6}, 9, false},
      {"2g.24gb", 2, 2, 3, {0,2,4}, 1, false},
      {"3g.47gb", 3, 4, 2, {0,4}, 2, false},
      {"4g.47gb", 4, 4, 1, {0}, 3, false},
      {"7g.94gb", 7, 8, 1, {0}, 4, false},
   },
   {},
   {}},
  {"H200-141GB",
   {"h200", "h200 nvl", "h200-141gb", "h200-sxm5-141gb"},
   8, 7, 144384,
   {
      {"1g.18gb", 1, 1, 7, {0,1,2,3,4,5,6}, 0, false},
      {"1g.18gb+me", 1, 1, 1, {0,1,2,3,4,5,6}, 7, true},
      {"1g.35gb", 1, 2, 4, {0,2,4,6}, 9, false},
      {"2g.35gb", 2, 2, 3, {0,2,4}, 1, false},
      {"3g.71gb", 3, 4, 2, {0,4}, 2, false},
      {"4g.71gb", 4, 4, 1, {0}, 3, false},
      {"7g.141gb", 7, 8, 1, {0}, 4, false},
   },
   {},
   {}},  };
  return kModels;
}

const MigModel* FindMigModel(const std::string& model) {
  std::string key = ToLower(model);
  if (key.rfind("nvidia ", 0) == 0) key = key.substr(7);
  for (const auto& m : MigModels()) {
    if (ToLower(m.name) == key) return &m;
    for (const char* a : m.aliases)
      if (key == a) return &m;
  }
  return nullptr;
}

const MigModel* FindMigModelFor(const std::string& model, uint64_t memory_mib) {
  const MigModel* base = FindMigModel(model);
  if (!base || memory_mib == 0) return base;
  std::string name = ToLower(base->name);
  std::string family = name.substr(0, name.find('-')) + "-";
  const MigModel* best = nullptr;
  uint64_t best_diff = 0;
  for (const auto& m : MigModels()) {
    if (ToLower(m.name).rfind(family, 0) != 0) continue;
    uint64_t diff = m.memory_mib > memory_mib ? m.memory_mib - memory_mib : memory_mib - m.memory_mib;
    if (!best || diff < best_diff) best = &m, best_diff = diff;
  }
  if (best && best_diff * 100 <= best->memory_mib * 15) return best;
  return base;
}

const MigProfile* FindMigProfile(const MigModel& m, const std::string& profile) {
  for (const auto& p : m.profiles)
    if (profile == p.name) return &p;
  return nullptr;
}

namespace {

std::string Describe(const MigPlacement& p) { return p.profile + "@" + std::to_string(p.start); }

}  // namespace

Status ValidateMigLayout(const MigModel& m, const std::vector<MigPlacement>& layout,
                         uint32_t driver_major) {
  std::vector<int> owner(m.memory_slices, -1);
  std::map<std::string, uint32_t> count;
  uint32_t compute = 0;
  for (size_t i = 0; i < layout.size(); ++i) {
    const MigPlacement& pl = layout[i];
    const MigProfile* p = FindMigProfile(m, pl.profile);
    if (!p) return InvalidArgument("MIG profile '" + pl.profile + "' does not exist on " + m.name);
    if (std::find(p->starts.begin(), p->starts.end(), pl.start) == p->starts.end())
      return InvalidArgument(Describe(pl) + ": " + pl.profile + " cannot start at memory slice " +
                             std::to_string(pl.start) + " on " + m.name);
    for (uint32_t s = pl.start; s < pl.start + p->memory_slices; ++s) {
      if (s >= m.memory_slices)
        return InvalidArgument(Describe(pl) + " runs past the last memory slice of " + m.name);
      if (owner[s] >= 0)
        return InvalidArgument(Describe(pl) + " overlaps " + Describe(layout[owner[s]]) +
                               " on memory slice " + std::to_string(s));
      owner[s] = static_cast<int>(i);
    }
    if (++count[pl.profile] > p->max_instances)
      return InvalidArgument(m.name + std::string(" allows at most ") +
                             std::to_string(p->max_instances) + " x " + pl.profile);
    compute += p->compute;
  }
  if (compute > m.compute_slices)
    return InvalidArgument("layout uses " + std::to_string(compute) + " compute slices; " +
                           m.name + " has " + std::to_string(m.compute_slices));
  for (const auto& group : m.exclusive) {
    uint32_t n = 0;
    for (const char* g : group) n += count[g];
    if (n > 1) return InvalidArgument(std::string("at most one of ") + group[0] + " / " +
                                      group[1] + " on " + m.name);
  }
  if (driver_major > 0 && driver_major < 510 && m.forbid_before_r510.size() == 2 &&
      count[m.forbid_before_r510[0]] && count[m.forbid_before_r510[1]])
    return InvalidArgument(std::string(m.forbid_before_r510[0]) + " with " +
                           m.forbid_before_r510[1] + " needs driver R510 or newer");
  return Status::Ok();
}

namespace {

bool PlaceRec(const MigModel& m, std::vector<MigPlacement>& layout,
              const std::vector<std::string>& todo, size_t i) {
  if (i == todo.size()) return true;
  const MigProfile* p = FindMigProfile(m, todo[i]);
  for (uint32_t s : p->starts) {
    layout.push_back({todo[i], s});
    if (ValidateMigLayout(m, layout).ok() && PlaceRec(m, layout, todo, i + 1)) return true;
    layout.pop_back();
  }
  return false;
}

}  // namespace

Result<std::vector<MigPlacement>> PlaceMigProfiles(const MigModel& m,
                                                   const std::vector<MigPlacement>& existing,
                                                   const std::vector<std::string>& profiles) {
  std::vector<std::string> todo = profiles;
  for (const auto& name : todo)
    if (!FindMigProfile(m, name))
      return InvalidArgument("MIG profile '" + name + "' does not exist on " + m.name);
  std::stable_sort(todo.begin(), todo.end(), [&](const std::string& a, const std::string& b) {
    return FindMigProfile(m, a)->memory_slices > FindMigProfile(m, b)->memory_slices;
  });
  std::vector<MigPlacement> layout = existing;
  if (!PlaceRec(m, layout, todo, 0))
    return InvalidArgument("MIG profiles do not fit on " + std::string(m.name) +
                           " next to the existing instances");
  return std::vector<MigPlacement>(layout.begin() + static_cast<long>(existing.size()),
                                   layout.end());
}

bool IsMigProfileName(const std::string& name) {
  if (name.empty()) return false;
  for (const auto& m : MigModels())
    if (FindMigProfile(m, name)) return true;
  return false;
}

uint64_t MigProfileMemoryMiB(const std::string& name) {
  // "3g.40gb" or "1g.10gb+me": the digits between "g." and "gb".
  size_t g = name.find("g.");
  size_t gb = name.find("gb", g == std::string::npos ? 0 : g + 2);
  if (g == std::string::npos || gb == std::string::npos || gb == g + 2) return 0;
  uint64_t v = 0;
  for (size_t i = g + 2; i < gb; ++i) {
    if (name[i] < '0' || name[i] > '9') return 0;
    v = v * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  return v * 1024;
}

uint32_t MigEmptyCapacity(const MigModel& m, const MigProfile& p) {
  for (uint32_t k = p.max_instances; k > 0; --k)
    if (PlaceMigProfiles(m, {}, std::vector<std::string>(k, p.name)).ok()) return k;
  return 0;
}

}  // namespace tessera
