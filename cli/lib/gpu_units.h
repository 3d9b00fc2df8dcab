#pragma once
// A node's GPU units as Slurm names them in Gres= strings: whole GPUs by type ("gpu:a100:1"),
// MIG instances by profile ("gpu:3g.40gb:2"); a GPU in MIG mode counts only as its instances.
// Used by `tcontrol show node` (Gres=, GresUsed=, MigLayout=), `tinfo -o %G` and
// `tinfo --gpus` (per-profile totals and free).
#include <string>
#include <vector>

#include "tessera/v1/types.pb.h"

namespace tessera::cli {

struct GpuUnitCount {
  std::string name;  // type or profile ("" = untyped GPU)
  int total = 0;
  int used = 0;      // whole: in alloc_gpu_indices; instance: in_use_by_job != 0
};

// Sorted by name; whole GPU types and MIG profiles alike.
std::vector<GpuUnitCount> GpuUnitsOfNode(const tessera::v1::NodeInfo& node);
// "gpu:a100:1,gpu:3g.40gb:2" (totals) or, used = true, the used counts
// ("gpu:a100:1,gpu:3g.40gb:0"); "" when the node has no GPU.
std::string GpuUnitsText(const std::vector<GpuUnitCount>& units, bool used);
// One GPU's MIG layout: "3g.40gb@0(MIG-...,job 42),1g.10gb@4(MIG-...,free)"; "" when the GPU
// is not in MIG mode.
std::string MigLayoutText(const tessera::v1::GpuDevice& gpu);

}  // namespace tessera::cli
