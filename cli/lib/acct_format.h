#pragma once
// sacct's output: the field table (names and widths as sacct's), -o/--format parsing
// ("JobID,JobName%30"; names case-insensitive; "%N" sets the width), and the three layouts:
// columns (right-justified except JobID, each cell followed by one space, a dashed line under
// the header, over-long values cut with a trailing '+'), --parsable (each value followed by
// '|') and --parsable2 ('|' between values only).
#include <cstdint>
#include <optional>
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
// sacct -l (sacct.h LONG_FIELDS); the usage fields print empty (not gathered yet).
inline constexpr char kLongAcctFields[] =
    "JobID,JobIDRaw,JobName,Partition,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,"
    "MaxRSSNode,MaxRSSTask,AveRSS,MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,"
    "MinCPUTask,AveCPU,NTasks,AllocCPUS,Elapsed,State,ExitCode,AveCPUFreq,ReqCPUFreqMin,"
    "ReqCPUFreqMax,ReqCPUFreqGov,ReqMem,ConsumedEnergy,MaxDiskRead,MaxDiskReadNode,"
    "MaxDiskReadTask,AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,"
    "ReqTRES,AllocTRES,TRESUsageInAve,TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,"
    "TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,TRESUsageOutMax,"
    "TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutAve,TRESUsageOutTot";

enum class AcctLayout { kColumns, kParsable, kParsable2 };

struct AcctColumn {
  std::string name;  // canonical spelling, printed in the header
  int width = 10;    // negative = left-justified (JobID)
};

// Every field name, space-separated, several per line (sacct/sstat -e).
std::string AcctFieldList();

// Errors: invalid field "Foo" in --format (the valid fields are listed).
Result<std::vector<AcctColumn>> ParseAcctFields(std::string_view spec);

// `usage` (issue 19, h19): per row (parallel to `jobs`), the usage WithSteps gathered; null =
// none (usage fields print empty, CPU totals 00:00:00).
std::string FormatAcct(const std::vector<tessera::v1::JobInfo>& jobs,
                       const std::vector<AcctColumn>& columns, AcctLayout layout, bool header,
                       const IdNames& names, int64_t now,
                       const std::vector<tessera::v1::StepUsage>* usage = nullptr);

// One usage field (MaxRSS, AveRSS, MaxVMSize, AveCPU, MinCPU, TotalCPU, UserCPU, SystemCPU,
// MaxPages, ... and their Node/Task companions) as sacct and sstat print it; nullopt = not a
// usage field. `node` stands in for an empty node name (the .batch step's node).
std::optional<std::string> UsageValue(const std::string& field,
                                      const tessera::v1::StepUsage& u, const std::string& node);

// Jobs followed by their steps, as sacct lists them: the batch script's "42.batch" (jobs that
// started), then each trun step "42.0"; an array element's steps are "1230_4.batch",
// "1230_4.0". Steps inherit the job's user and account and show no partition. Steps of jobs
// not in `jobs` are dropped. (No ".extern" step: Slurm makes one only with
// PrologFlags=Contain, which Tessera does not have.)
// `usage` (issue 19): filled parallel to the result: each step's gathered usage (the .batch
// step's from the controller's batch step record, id 0xfffffffb), and on a job's own row the
// CPU time of all its steps (TotalCPU, UserCPU, SystemCPU; ntasks 0).
std::vector<tessera::v1::JobInfo> WithSteps(const std::vector<tessera::v1::JobInfo>& jobs,
                                            const std::vector<tessera::v1::StepInfo>& steps,
                                            std::vector<tessera::v1::StepUsage>* usage = nullptr);

}  // namespace tessera::cli
