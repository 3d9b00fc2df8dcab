#pragma once
// sacct's output: the field table (names and widths as sacct's), -o/--format parsing
// ("JobID,JobName%30"; names case-insensitive; "%N" sets the width), and the three layouts:
// columns (right-justified except JobID, each cell followed by one space, a dashed line under
// the header, over-long values cut with a trailing '+'), --parsable (each value followed by
// '|') and --parsable2 ('|' between values only).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/lib/id_names.h"
#include "common/status.h"
#include "tessera/v1/types.pb.h"

namespace tessera::cli {

inline constexpr char kDefaultAcctFields[] =
    "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";
inline constexpr char kBriefAcctFields[] = "JobID,State,ExitCode";

enum class AcctLayout { kColumns, kParsable, kParsable2 };

struct AcctColumn {
  std::string name;  // canonical spelling, printed in the header
  int width = 10;    // negative = left-justified (JobID)
};

// Errors: invalid field "Foo" in --format (the valid fields are listed).
Result<std::vector<AcctColumn>> ParseAcctFields(std::string_view spec);

std::string FormatAcct(const std::vector<tessera::v1::JobInfo>& jobs,
                       const std::vector<AcctColumn>& columns, AcctLayout layout, bool header,
                       const IdNames& names, int64_t now);

// Jobs followed by their steps (trun), as sacct lists them: a step is a row "42.0" that
// inherits its job's user, partition and account. Steps of jobs not in `jobs` are dropped.
std::vector<tessera::v1::JobInfo> WithSteps(const std::vector<tessera::v1::JobInfo>& jobs,
                                            const std::vector<tessera::v1::StepInfo>& steps);

}  // namespace tessera::cli
