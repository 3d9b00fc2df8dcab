#pragma once
// GPUs by need (DESIGN §5, issue 14): `--gpus=N --gpu-mem=20G` is served by the smallest GPU unit
// whose memory fits, a MIG instance or a whole GPU, whichever the cluster can give.
//
// Representation: a Req with gpus > 0 and gpu_mem_mib = M (per unit). Its gpu_model is "" (any
// model) or names a type/profile, which then also filters. A unit's memory: a MIG instance's is
// its profile's (MigProfileMemoryMiB, common/mig_profiles.h: the "NNgb" of the name); a whole
// GPU's is GpuSnap::mem_mib (0 = unknown: never fits a memory request). A whole-GPU type's memory
// in a partition is the least of its units there (a type whose GPUs differ in memory counts as
// its smallest).
//
// Placement (placement.cc) tries such a job as concrete requests, one per candidate model of its
// partition, smallest memory first (ties: MIG profiles before whole GPUs, then by name): each
// variant is the job with every gpu_mem Req's model set to the candidate and gpu_mem_mib cleared,
// placed exactly as a job naming that model (instances by profile, whole GPUs by type). The first
// variant that starts now (allocate/backfill), or that can be reserved (backfill), wins; all GPU
// units of one job are then of one model. The variants of a job use the largest gpu_mem_mib of its
// Reqs. Jobs without gpu_mem_mib take none of this (no cost for them).
//
// Dynamic MIG (migplan): a gpu_mem job that did not start asks the smallest profile with enough
// memory among the MIG models of the dynamic GPUs of its candidate nodes (SmallestMigProfileFor).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ctld/sched/snapshot.h"

namespace tessera::sched {

class ClusterState;
struct JobInfo;
class Session;

// Whether some Req of `job` asks GPUs by memory (gpus > 0 and gpu_mem_mib > 0).
bool AsksGpuMem(const JobSnap& job);
// The largest gpu_mem_mib among the job's GPU Reqs (0 = none).
uint64_t JobGpuMem(const JobSnap& job);
// The model of the job's gpu_mem Reqs ("" = any), the filter of the candidates.
const std::string& JobGpuMemFilter(const JobSnap& job);

// Memory of one unit: a MIG instance (mig_uuid set) by its profile, a whole GPU by mem_mib.
uint64_t GpuUnitMemMib(const GpuSnap& g);

// Candidate models of partition `part` for `mem` MiB per unit (see above), smallest first;
// `filter` "" = any model, else only that model.
std::vector<std::string> GpuMemCandidates(const ClusterState& st, int part, uint64_t mem,
                                          const std::string& filter);

// `job` with every gpu_mem Req asking `model` instead (gpu_mem_mib cleared).
JobSnap GpuMemVariant(const JobSnap& job, const std::string& model);

// Runs `fn` on `j` as each variant in candidate order (j.snap and j.shape swapped for the call,
// restored after) until `fn` returns true; returns whether one did. With no candidate, sets
// j.reason = "Resources" and returns false. Plugin callbacks run inside `fn` (Allocatable,
// OnAllocated, predicates, scores) see the variant: they must copy what they need from j.snap,
// never keep the pointer.
bool ForEachGpuMemVariant(Session& s, JobInfo& j, const std::function<bool(JobInfo&)>& fn);

// The smallest profile (memory, then compute slices; media-extension profiles left out) of MIG
// model `mig_model` with at least `mem` MiB, or "" when none.
std::string SmallestMigProfileFor(const std::string& mig_model, uint64_t mem);

}  // namespace tessera::sched
