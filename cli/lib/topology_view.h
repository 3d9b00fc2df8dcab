#pragma once
// `tcontrol show topology` (issue 15) in Slurm's scontrol show topology form, one line per
// switch or block (src/plugins/topology/{tree,block}/topology_*.c _print_topo_record):
//   SwitchName=s0 Level=0 LinkSpeed=1 Nodes=n[0-3]
//   SwitchName=top Level=1 LinkSpeed=1 Nodes=n[0-7] Switches=s[0-1]
//   BlockName=b1 BlockIndex=0 Nodes=n[0-3] BlockSize=4
//   AggregatedBlock=b[1-2] BlockIndex=2 Nodes=n[0-7] BlockSize=8
// and the arguments it takes: [UNIT] [node(s)=HOSTLIST] [switch=|block=|unit=NAME].
#include <string>
#include <vector>

#include "common/status.h"
#include "tessera/v1/controller.pb.h"

namespace tessera::cli {

Result<tessera::v1::ShowTopologyRequest> ParseShowTopologyArgs(
    const std::vector<std::string>& args);
std::string FormatTopology(const tessera::v1::ShowTopologyResponse& resp);

}  // namespace tessera::cli
