#pragma once
// Absolute times as Slurm's commands accept them (sbatch --begin, sacct -S/-E), relative to a
// given `now` and the local time zone:
//   now[{+|-}N[seconds|minutes|hours|days|weeks]]  (unit default: seconds; "now+1hour")
//   today, midnight (today 00:00), tomorrow (tomorrow 00:00), noon, elevenses (11:00),
//   fika (15:00), teatime (16:00): the next such time, today or tomorrow
//   HH:MM[:SS]                      today, or tomorrow if already past
//   YYYY-MM-DD[THH:MM[:SS]]
//   MM/DD[/YY]                      (sacct's form)
// Errors name the value: invalid time specification "...".
#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace tessera::cli {

Result<int64_t> ParseTimeSpec(std::string_view s, int64_t now);

// Local midnight of the day containing `now`.
int64_t LocalMidnight(int64_t now);

}  // namespace tessera::cli
