#pragma once
// scontrol's "show" views: multi-line Key=Value records, continuation lines indented three
// spaces, each record followed by an empty line. Pure functions of the protos.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/lib/id_names.h"
#include "tessera/v1/types.pb.h"

namespace tessera::cli {

std::string FormatJobDetail(const tessera::v1::JobInfo& job, const IdNames& names, int64_t now);
std::string FormatNodeDetail(const tessera::v1::NodeInfo& node);
std::string FormatPartitionDetail(const tessera::v1::PartitionInfo& part);
// "JobId=5 Events=2" then one "   Seq=.. Time=.. Type=.. Detail=.." line per event.
std::string FormatJobEvents(uint64_t job_id, const std::vector<tessera::v1::JobEvent>& events);

// scontrol's duration style for limits: "UNLIMITED" (-1), "Partition_Limit" (0), else
// "HH:MM:SS" / "D-HH:MM:SS".
std::string LimitForShow(int64_t seconds);

}  // namespace tessera::cli
