#pragma once
// tshare --queues (issue 16 §2): the accounts as queues, as of the last scheduling cycle
// (ctld/sched/queues.h). Fields (-o; case-insensitive prefixes; Name%W sets a width):
//   Account (tree-indented), Guarantee, Limit, Weight, Reclaimable, Allocated, Demand (eligible
//   pending requests), Deserved (fair share of the moment: guarantee + its weighted part of the
//   idle rest, capped by Limit and demand), Borrowed (allocated above the guarantee), OverShare
//   (allocated above the deserved share: what reclaim may take back).
// TRES values as sacctmgr: "cpu=8,mem=64000M,gres/gpu=4" (none: empty).
#include <ostream>
#include <set>
#include <string>

#include "common/status.h"
#include "tessera/v1/controller.pb.h"

namespace tessera::cli {

// Prints the table; an unknown field is an error naming it (nothing printed).
Status PrintQueues(std::ostream& out, const tessera::v1::GetSharesResponse& resp,
                   const std::string& format, int parsable, bool header,
                   const std::set<std::string>& accounts);

}  // namespace tessera::cli
