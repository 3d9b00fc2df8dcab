#pragma once
// tessera-sim's command line and its named scheduler configurations (issue 17 §2).
//
// Options are "--name VALUE" pairs; a name not in kSimOptions, a missing value or a word that
// is not an option is an error naming it (a typo must not run a different experiment).
//
// Presets (--compare NAME,...), each a variant of the configuration loaded from --conf:
//   default       the configuration as loaded: the shipped default policy (sched_config.h,
//                 "Default policy") unless the file overrides it
//   easy          EASY backfill in FCFS order: plugin fifo instead of priority, one reservation
//                 (bf_reservation_depth=1)
//   conservative  conservative backfill in FCFS order: every pending job reserved
//                 (bf_reservation_depth = kEveryJob)
//   fifo          FCFS without backfill (enqueue, allocate)
//   spread, fairshare, nofairshare, drf, mig-*, topo-*: see sim/README.md
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "ctld/sched/sched_config.h"

namespace tessera::sim {

inline constexpr uint32_t kEveryJob = std::numeric_limits<uint32_t>::max();

// Every option tessera-sim knows, without the leading "--".
extern const std::vector<std::string> kSimOptions;

// argv[1..] -> option name (no "--") -> value. Errors: "unknown option --x (known: ...)",
// "option --x needs a value", "unexpected argument \"x\"", "option --x given twice".
Result<std::map<std::string, std::string>> ParseSimArgs(int argc, const char* const* argv);

// The FCFS presets above (easy, conservative, fifo) applied to `base`; *handled = false (and
// `base` unchanged) for any other name.
sched::SchedConfig PolicyPreset(const std::string& name, sched::SchedConfig base, bool* handled);

}  // namespace tessera::sim
