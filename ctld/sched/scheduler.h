#pragma once
// tessera_sched entry points. A cycle is a pure function of (snapshot, config, registry):
// nothing here reads a clock, a file, the network or an unseeded random source.
//
// RunCycle opens a Session over the snapshot, lets each configured plugin register its
// callbacks (SchedulerPlugins=, in order), runs each configured action (SchedulerActions=, in
// order) and returns one Decision per pending job, in snapshot order: kStart with a placement
// (per node: cpus, mem, GPU indices, tasks per group), or kPending with a Slurm reason and, for
// jobs backfill reserved, the expected start time and nodes.
#include <cstdint>
#include <functional>

#include "common/status.h"
#include "ctld/sched/decision.h"
#include "ctld/sched/registry.h"
#include "ctld/sched/sched_config.h"
#include "ctld/sched/snapshot.h"

namespace tessera::sched {

class AssocIndex;  // assoc.h

// `micros`, when given, is a monotonic clock in microseconds read only to time the actions
// for statistics (CycleResult::backfill_us); no decision depends on it.
CycleResult RunCycle(const ClusterSnapshot& snap, const SchedConfig& cfg, const Registry& registry,
                     const std::function<int64_t()>& micros = {});
// The default configuration (priority + EASY backfill) with the built-in registry.
CycleResult RunCycle(const ClusterSnapshot& snap);

// "Busy vs never": OK if the job could run on its partition's nodes were they all idle and up;
// otherwise InvalidArgument saying which part of the request can never be met (partition,
// node count, constraint, CPUs, memory, GPUs).
Status CheckSatisfiable(const JobSnap& job, const ClusterSnapshot& empty_cluster);

// Submit-time limits: the QoS exists (when QoS are configured) and the user stays within
// MaxSubmitJobsPerUser counting `current`'s pending and running jobs; the dependency string
// parses. Error messages use Slurm's words (e.g. "QOSMaxSubmitJobPerUserLimit").
// `assocs`, when given, indexes `cfg`'s associations (built once per config by the caller).
Status CheckSubmit(const JobSnap& job, const ClusterSnapshot& current, const SchedConfig& cfg,
                   const AssocIndex* assocs = nullptr);

}  // namespace tessera::sched
