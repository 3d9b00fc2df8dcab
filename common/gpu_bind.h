#pragma once
// srun --gpu-bind (issue 19, h19 s7): which of a step's GPUs on a node each task sees. Pure; used
// by trun (to check the option) and by noded (to set each task's CUDA_VISIBLE_DEVICES and
// SLURM_STEP_GPUS, task_env.h).
//
// Forms, as Slurm 22.05's srun (an optional "verbose," prefix is accepted and ignored):
//   none             every task sees every GPU of the step on its node
//   per_task:N       task with node-local index i sees the step's GPUs [i*N, i*N+N) on its node,
//                    in index order (what --gpus-per-task=N implies without --gpu-bind)
//   map_gpu:LIST     task i sees GPU LIST[i] (a decimal or 0x index into the step's GPUs on
//                    the node, zero-based, as Slurm with ConstrainDevices); "V*R" repeats V for
//                    R tasks; the list is reused from its start when tasks outnumber it
//   mask_gpu:LIST    task i sees the GPUs whose bits are set in LIST[i] (hexadecimal, optional
//                    0x; bit k = the step's k-th GPU on the node); "V*R" as above
//   closest          every GPU of the step: Tessera does not bind tasks to CPUs, so no GPU is
//                    closer to a task than another (Slurm: the GPUs of the task's sockets)
//   single:N         tasks [0,N) see the first GPU, [N,2N) the second, ... (modulo the count),
//                    as Slurm when a task's CPUs reach every GPU
// Task i is the task's index among the step's tasks on its node (SLURM_LOCALID), as Slurm.
// As slurmstepd: no binding on a node that runs a single task of the step; a task left without
// a GPU (per_task beyond the GPUs, an index or mask outside them) gets the first one.
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera {

// The StepAgent RunTasksRequest.env key by which trun passes a step's effective binding to noded
// (the value: a --gpu-bind value; noded does not pass the key on to the tasks).
inline constexpr char kTrunGpuBindEnv[] = "TESSERA_TRUN_GPU_BIND";

struct GpuBind {
  enum Kind { kNone, kPerTask, kMap, kMask, kClosest, kSingle } kind = kNone;
  uint32_t count = 0;  // per_task:N, single:N
  // map_gpu / mask_gpu: one entry per task, the repetitions expanded (at most 4096 entries).
  std::vector<uint64_t> list;
  std::string text;  // the value as given, for messages and SLURM_GPU_BIND
};

// Parses a --gpu-bind value; InvalidArgument naming the value and what is wrong.
Result<GpuBind> ParseGpuBind(const std::string& value);

// The positions (0-based, ascending) among the step's `ngpus` GPUs on the node that the task
// with node-local index `local_index` of `local_tasks` sees. All of them for kNone, kClosest, a
// single task here, or ngpus == 0.
std::vector<size_t> TaskGpuPositions(const GpuBind& bind, size_t ngpus, uint32_t local_index,
                                     uint32_t local_tasks);

}  // namespace tessera
