#include "common/config_check.h"

#include <filesystem>

#include "common/config_file.h"
#include "common/duration.h"
#include "common/mig_profiles.h"

namespace tessera {

Result<std::vector<MigPlacement>> MigLayoutFromItems(const MigModel& m,
                                                     const std::vector<std::string>& items) {
  std::vector<MigPlacement> fixed;
  std::vector<std::string> floating;
  for (const auto& it : items) {
    size_t at = it.find('@');
    MigPlacement p{it.substr(0, at), 0};
    if (!FindMigProfile(m, p.profile)) {
      std::string known;
      for (const auto& q : m.profiles) known += (known.empty() ? "" : ", ") + std::string(q.name);
      return InvalidArgument("MIG profile '" + p.profile + "' does not exist on " + m.name +
                             " (known: " + known + ")");
    }
    if (at == std::string::npos) {
      floating.push_back(p.profile);
      continue;
    }
    std::string s = it.substr(at + 1);
    if (s.empty() || s.size() > 2 || s.find_first_not_of("0123456789") != std::string::npos)
      return InvalidArgument("bad MIG placement '" + it + "' (expected PROFILE[@START])");
    p.start = static_cast<uint32_t>(std::stoul(s));
    fixed.push_back(p);
  }
  TESSERA_RETURN_IF_ERROR(ValidateMigLayout(m, fixed));
  auto placed = PlaceMigProfiles(m, fixed, floating);
  if (!placed.ok()) return placed.status();
  fixed.insert(fixed.end(), placed->begin(), placed->end());
  return fixed;
}

std::vector<std::string> CheckGresMig(const ClusterConfig& c) {
  std::vector<std::string> out;
  auto path = std::filesystem::path(c.path).parent_path() / "gres.conf";
  if (!std::filesystem::exists(path)) return out;
  auto lines = ParseConfigFile(path.string());
  if (!lines.ok()) return {lines.status().message()};
  for (const auto& l : *lines) {
    const std::string* name = l.Find("name");
    if (!name || *name != "gpu") continue;
    const std::string* enabled = l.Find("migenabled");
    const std::string* layout = l.Find("miglayout");
    bool on = enabled && (ToLower(*enabled) == "yes" || ToLower(*enabled) == "true" || *enabled == "1");
    if (layout && !layout->empty() && !on) {
      out.push_back(l.Where() + ": MigLayout= needs MigEnabled=yes");
      continue;
    }
    if (!on) continue;
    const std::string* type = l.Find("type");
    const std::string* mem = l.Find("memorymib");
    const std::string* sim = l.Find("simulated");
    bool simulated = sim && (ToLower(*sim) == "yes" || ToLower(*sim) == "true" || *sim == "1");
    uint64_t memory = 0;
    if (mem) {
      auto n = ParseUint(*mem, "MemoryMiB");
      if (n.ok()) memory = *n;
    }
    const MigModel* model = FindMigModelFor(type ? *type : "", memory);
    if (!model) {
      if (simulated || (layout && !layout->empty()))
        out.push_back(l.Where() + ": MigEnabled=yes but GPU type '" + (type ? *type : "") +
                      "' has no known MIG profiles");
      continue;
    }
    if (!layout || layout->empty()) continue;
    auto placed = MigLayoutFromItems(*model, SplitList(*layout));
    if (!placed.ok()) out.push_back(l.Where() + ": MigLayout=" + *layout + ": " + placed.status().message());
  }
  return out;
}

}  // namespace tessera
