#pragma once
// Derived facts about a JobInfo that several commands print the same way (squeue, scontrol,
// sacct): elapsed time, node and CPU counts, partition, the GRES string, the time limit.
// Pure functions of the proto and `now`.
#include <cstdint>
#include <string>

#include "common/job_state.h"
#include "tessera/v1/types.pb.h"

namespace tessera::cli {

namespace pb = ::tessera::v1;

JobState StateOf(const pb::JobInfo& job);
// Seconds the job has run: 0 while pending or never started; now - start while running;
// end - start once ended.
int64_t ElapsedSeconds(const pb::JobInfo& job, int64_t now);
// Allocated node count, or the requested minimum (at least 1) before allocation.
uint32_t NodeCount(const pb::JobInfo& job);
// Allocated CPUs (num_cpus), or the requested total (tasks x cpus per task) before allocation.
uint32_t CpuCount(const pb::JobInfo& job);
uint32_t TaskCount(const pb::JobInfo& job);
// The resolved partition, falling back to the requested one.
std::string PartitionOf(const pb::JobInfo& job);
std::string AccountOf(const pb::JobInfo& job);
// Resolved limit; falls back to the requested one; 0 = not known; -1 = unlimited.
int64_t TimeLimitOf(const pb::JobInfo& job);
// Per-node GPUs as Slurm's tres_per_node: "gres/gpu:a100:2"; "" when none.
std::string GresOf(const pb::JobInfo& job);
// "cpu=8,mem=16G,node=2,billing=8,gres/gpu=4" from the allocation (or the request when
// pending), in Slurm's TRES order; billing is the CPU count (Slurm's default weights).
std::string TresOf(const pb::JobInfo& job);
// Expected or actual end: end_time; for a running job with a limit, start + limit; 0 unknown.
int64_t EndTimeOf(const pb::JobInfo& job);
// Slurm's job id text: "1234", an array element "1230_4" (array job id _ index) or the pending
// rest of an array "1230_[5-15%4]".
std::string JobIdText(const pb::JobInfo& job);
// GPUs allocated, "n1:gpu:2(IDX:0,1)" per node joined with ","; MIG instances as
// "n1:gpu:1g.10gb:2(MIG-...,MIG-...)" (the profile the job asked); "" when none.
std::string GpuAllocText(const pb::JobInfo& job);
// Slurm's Command: argv joined with spaces, or "(null)".
std::string CommandOf(const pb::JobInfo& job);

}  // namespace tessera::cli
