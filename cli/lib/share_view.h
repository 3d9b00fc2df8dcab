#pragma once
// GPU sharing as the commands show it (issue 14 §3), in Slurm's words:
//   Gres:     "mps:200,shard:8"            (totals: 100 MPS percent per Mps=yes GPU, Replicas)
//   GresUsed: "mps:50(IDX:0),shard:3(IDX:1)"  (what running jobs hold, by GPU index)
//   per GPU (tinfo --gpus): "0:mps[50/100]" or "1:shard[3/4]"
// Empty strings when the node has no GPU configured for sharing.
#include <string>

#include "tessera/v1/types.pb.h"

namespace tessera::cli {

std::string ShareGres(const tessera::v1::NodeInfo& node);
std::string ShareGresUsed(const tessera::v1::NodeInfo& node);
// "" unless `g` is shared right now (mps_used or shards_used > 0).
std::string ShareOfGpu(const tessera::v1::GpuDevice& g);

}  // namespace tessera::cli
