#pragma once
// sinfo's -o/--format and -l/--long views.
//
// Format codes (with sinfo's "%[.][width]c" widths; '.' right-justifies):
//   %P partition (default marked '*')  %R partition name   %a availability  %l time limit
//   %L default time  %D node count  %t compact state  %T long state  %N node list
//   %n host names  %c CPUs per node  %C CPUs "allocated/idle/other/total"  %m memory (MiB)
//   %G generic resources  %f features  %E reason  %s job size  %r root-only  %h oversubscribe
//   %g groups  %z sockets:cores:threads  %d tmp disk  %w weight  %O CPU load  %e free memory
//   %F nodes "allocated/idle/other/total" (sinfo -s)
// Rows are (partition, node) pairs grouped, as sinfo does, when every non-aggregating field is
// equal; %N, %n, %D and %C aggregate over the group. With `node_oriented` nothing is grouped.
#include <string>
#include <vector>

#include "common/status.h"
#include "tessera/v1/types.pb.h"

namespace tessera::cli {

// sinfo -l's formats.
inline constexpr char kLongInfoFormat[] = "%9P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N";
// sinfo -s (--summarize).
inline constexpr char kSummarizeInfoFormat[] = "%9P %.5a %.10l %.16F  %N";
inline constexpr char kLongNodeInfoFormat[] = "%N %.6D %.9P %.11T %.4c %.8z %.6m %.8d %.6w %.8f %20E";

struct InfoField {
  char code = 0;
  int width = 0;       // 0 = as long as the value
  bool right = false;
  std::string suffix;  // literal text after the field
};
struct InfoFormat {
  std::string prefix;
  std::vector<InfoField> fields;
};

// Errors: invalid format code "%y" (the valid codes are listed).
Result<InfoFormat> ParseInfoFormat(const std::string& fmt);

std::string FormatInfoCustom(const std::vector<tessera::v1::PartitionInfo>& partitions,
                             const std::vector<tessera::v1::NodeInfo>& nodes,
                             const InfoFormat& fmt, bool node_oriented, bool header);

}  // namespace tessera::cli
