#pragma once
// MIG in tessera-sim: three ways to run the same GPUs, for comparing them on one workload, and
// the live MIG state the engine keeps while it replays.
//
// Variants (`--compare mig-whole,mig-static,mig-dynamic`):
//  - mig-whole:   no MIG; a job asking for a MIG profile gets a whole GPU of any type instead.
//  - mig-static:  every MIG-capable GPU is cut once, before the run, into a fixed layout (the
//                 admin's choice today), layouts taken round-robin over the GPUs:
//                 `--mig-layout "7g.80gb;4g.40gb,3g.40gb;3g.40gb,2g.20gb,1g.10gb,1g.10gb"`; the
//                 default is the mixed set 7g | 4g+3g | 3g+2g+1g+1g | 7 x 1g of the model.
//  - mig-dynamic: MIG-capable GPUs start in MIG mode with no instances, MigStrategy=dynamic
//                 (switching MIG mode needs a GPU reset, so the planner never does it); the
//                 scheduler's planner cuts them on demand (CycleResult::mig_reconfigs) and a reconfiguration takes
//                 SchedConfig::mig_reconfig_seconds of virtual time, during which the GPU is busy.
// A MIG-capable GPU is one whose type and memory (gres.conf Type=/MemoryMiB=, or the type alone)
// name a model of common/mig_profiles.h.
//
// Useful GPU memory: a job asking for profile "Ng.Mgb" uses M GiB per GPU unit it asked for, in
// every variant (under mig-whole it still holds the whole GPU: the rest is idle memory); a job
// asking for whole GPUs uses their full memory. GPU-memory utilization is this useful memory over
// the memory of all GPUs, integrated over the makespan.
#include <cstdint>
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "common/status.h"
#include "ctld/sched/decision.h"
#include "ctld/sched/snapshot.h"
#include "sim/trace.h"

namespace tessera::sim {

enum class MigVariant { kNone, kWhole, kStatic, kDynamic };

// "mig-whole" etc.; kNone for any other name.
MigVariant MigVariantByName(const std::string& name);

// "a,b;c" -> {{a,b},{c}}.
std::vector<std::vector<std::string>> ParseMigLayouts(const std::string& text);

// Adds NodeSnap::mig_gpus for MIG-capable GPUs (from cfg.gpus declarations) and applies the
// variant: kStatic replaces each MIG-capable GPU's whole entry by its instances (`static_layouts`
// round-robin, or the defaults above when empty); kDynamic marks them dynamic, in MIG mode
// with no instances. Errors name the
// node and GPU when a static layout does not fit the model.
Status ApplyMigVariant(const ClusterConfig& cfg, MigVariant v,
                       const std::vector<std::vector<std::string>>& static_layouts,
                       std::vector<sched::NodeSnap>& nodes);

// The GPUs of `node`: its gres.conf declarations, else its Gres=gpu:<type>:<n> (memory unknown).
std::vector<GpuDecl> DeclsOf(const ClusterConfig& cfg, const std::string& node);
// The memory of one whole GPU: the first declaration's MemoryMiB=, else its MIG model's memory.
uint64_t WholeGpuMemMib(const ClusterConfig& cfg);

// Memory per GPU unit of profile "Ng.Mgb[+me]" in MiB; 0 when `name` is not a profile name.
uint64_t ProfileMemMib(const std::string& name);

// Useful GPU memory of a trace job (see above), given the memory of one whole GPU.
uint64_t UsefulGpuMemMib(const TraceJob& t, uint64_t whole_gpu_mem_mib);

// kWhole: a profile request becomes a request for that many whole GPUs of any type.
void ApplyMigVariant(MigVariant v, std::vector<TraceJob>& trace);

// `empty` with, on every dynamic MIG GPU of each node, as many free `profile` units as an empty
// GPU of its model holds: what "busy vs never" at submit sees for MigStrategy=dynamic (as ctld's
// DynamicMigCluster). Unchanged when `profile` is not a profile of any dynamic GPU's model.
sched::ClusterSnapshot DynamicMigCapacity(sched::ClusterSnapshot empty, const std::string& profile);

// Live MIG state during a replay. The planner never switches a GPU's MIG mode (that needs a GPU
// reset), so a reconfigured GPU is in MIG mode before and after.
struct MigLive {
  // Marks the instances (and whole GPUs) of `p` on `n` taken or returned.
  static void Use(sched::NodeSnap& n, const sched::NodePlacement& p, bool take);
  // A reconfiguration starts: the GPU's units leave the schedulable list until Finish.
  static void Begin(sched::NodeSnap& n, const sched::MigReconfig& r);
  // It ends: the GPU's new instances become schedulable (simulated UUIDs).
  static void Finish(sched::NodeSnap& n, const sched::MigReconfig& r);
};

}  // namespace tessera::sim
