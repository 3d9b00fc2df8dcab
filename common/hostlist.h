#pragma once
// Slurm hostlist expressions: "node[0,3-4,8],linux,linux[2,5]".
//
// Expand: splits on commas outside brackets, expands every bracket group (several groups in one
// name give their cartesian product, "r[1-2]n[1-2]"), keeps zero padding ("n[01-03]" gives
// n01,n02,n03) and the order written. Duplicates are kept.
// Compress: the inverse, as Slurm's hostlist_ranged_string: order is preserved, runs of
// consecutive hosts that share a prefix and number width are merged into ranges (unpadded
// numbers merge across widths: n9,n10 -> n[9-10]), and neighbouring
// runs with the same prefix share one bracket ("c[2-6,6]"). A lone numbered host prints plain.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera {

// Bound on the number of names one expression may produce (bad-input protection).
inline constexpr size_t kMaxHostlistSize = 1'000'000;

Result<std::vector<std::string>> ExpandHostlist(std::string_view expr);
std::string CompressHostlist(const std::vector<std::string>& hosts);

// Sorts host names as people expect ("n2" before "n10"): by the part before the trailing
// number, then that number, then its width, then the name. Stable. (sinfo's node lists; ctld's
// node-state summary and the CLI both use it, so their lists are byte-identical.)
void SortHostNames(std::vector<std::string>& names);
bool HostNameLess(const std::string& a, const std::string& b);

}  // namespace tessera
