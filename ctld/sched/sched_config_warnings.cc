// Config warnings, printed the same way by tessera-ctld and tessera-sim (sched_config.h).
#include "ctld/sched/sched_config.h"

namespace tessera::sched {

std::vector<std::string> ConfigWarnings(const std::vector<std::string>& cluster_warnings,
                                        const SchedConfig& c) {
  std::vector<std::string> out = cluster_warnings;
  out.insert(out.end(), c.warnings.begin(), c.warnings.end());
  return out;
}

void PrintConfigWarnings(std::ostream& out, const std::string& program,
                         const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) out << program << ": warning: " << w << "\n";
}

}  // namespace tessera::sched
