#pragma once
// Slurm's separate gres.conf lines for GPU sharing (issue 14):
//   NodeName=n[1-4] Name=mps Count=200 [File=/dev/nvidia[0-1]]
//   NodeName=n[1-4] Name=shard Count=8 [File=/dev/nvidia0]
// mapped onto the per-GPU model of GpuDecl (GpuDecl::mps_counts / shard_counts), with Slurm's
// semantics (gres.html "MPS Management", "Sharding"):
//  - without File= the Count is spread evenly over all the node's GPUs (its Name=gpu lines, in
//    declaration order = node-local GPU index); a remainder goes to the last GPUs, as Slurm
//    does (Count=10 over 3 GPUs: 3,3,4);
//  - with File= the Count belongs to the named GPU device files (/dev/nvidia<I> = the node's GPU
//    index I; a range /dev/nvidia[0-1] spreads it over those); GPUs no line names get 0;
//  - a job's --gres=mps:N on a GPU with MPS count C gets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
//    N x 100 / C (Slurm's rule; ctld/gpu_shares.h MpsPercent).
// Refused with file:line: a Count that is not a number or is too large (mps: at most 100000 per
// node; shard: at most 64 per GPU, as Replicas=), Count=0 without File=, a File= that is not
// /dev/nvidia<N> or names a GPU the node does not have, a GPU named by two lines of the same
// kind, lines with and without File= for the same node and kind, a node without Name=gpu
// lines, a node whose Name=gpu lines also say Mps=yes (mps) or Replicas= (shard), an unknown
// node or a line without NodeName=.
#include <vector>

#include "common/cluster_config.h"
#include "common/config_file.h"
#include "common/status.h"

namespace tessera {

// Whether `l` is a Name=mps or Name=shard line (case-insensitive name).
bool IsGresShareLine(const ConfigLine& l);

// Applies the Name=mps / Name=shard lines `lines` (in file order) to c->gpus, whose Name=gpu
// declarations must be complete. Nothing changes on error.
Status ApplyGresShareLines(const std::vector<ConfigLine>& lines, ClusterConfig* c);

}  // namespace tessera
