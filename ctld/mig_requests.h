#pragma once
// Submit-time checks of MIG profile requests (`--gres=gpu:3g.40gb:1`, `--gpus=1g.10gb:2`):
// "busy vs never". A job asking a profile is accepted when some node of its partition offers
// instances of it now (busy or free), may offer it (a node that has not reported its GPUs yet
// and whose configured type has MIG tables), or could be given it by a MigStrategy=dynamic
// re-layout (DynamicMigCluster, ctld/sched_bridge_mig.h). Otherwise it is refused with a message
// naming the profile.
#include <string>

#include "common/cluster_config.h"
#include "common/status.h"
#include "ctld/nodes/node_table.h"
#include "ctld/sched/snapshot.h"

namespace tessera::ctld {

// True when a group of `job` asks for a MIG profile (a name of common/mig_profiles.h).
bool AsksMigProfile(const sched::JobSnap& job);
// AsksMigProfile, or GPUs by memory (--gpu-mem, which MIG instances may serve): submit checks
// it with CheckMigSatisfiable rather than against the configured whole GPUs alone.
bool NeedsMigCheck(const sched::JobSnap& job);

// The configured cluster (SchedBridge::EmptyCluster) with, for the profiles `job` asks, the
// MIG instances each node offers or may offer (current layouts, or the type's tables for nodes
// that have not reported), every unit free: what
// sched::CheckSatisfiable needs to tell "busy" from "never" for MIG requests.
sched::ClusterSnapshot MigCapacityCluster(const ClusterConfig& cfg, NodeTable& nodes,
                                          const sched::JobSnap& job);

// sched::CheckSatisfiable against MigCapacityCluster, then (one task group) against
// DynamicMigCluster; its refusal names the profile. Also for --gpu-mem jobs (sched/gpu_mem.h):
// the current layouts and whole GPUs, then, on dynamic nodes, every MIG profile with enough
// memory (smallest first) that a GPU there could be re-laid to offer.
Status CheckMigSatisfiable(const ClusterConfig& cfg, NodeTable& nodes, const sched::JobSnap& job);

}  // namespace tessera::ctld
