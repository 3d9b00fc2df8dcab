#pragma once
// RDMA HCA ports as `tcontrol show node` shows them (issue 14 §5): one entry per port with its
// link layer, state, NUMA node, RoCE interface and the node's GPUs on the same NUMA node
// (the GPU-NIC affinity the scheduler's HCA choice follows):
//   HCAs=mlx5_0:1(InfiniBand,ACTIVE,numa=0,gpus=0) mlx5_1:1(Ethernet,ACTIVE,numa=1,netdev=eth2,gpus=1)
// "" when the node reported no HCA.
#include <string>

#include "tessera/v1/types.pb.h"

namespace tessera::cli {

std::string FormatHcas(const tessera::v1::NodeInfo& node);

}  // namespace tessera::cli
