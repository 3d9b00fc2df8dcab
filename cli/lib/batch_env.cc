// sbatch's option-derived SLURM_* variables (batch_env.h).
#include "cli/lib/batch_env.h"

#include "common/env_block.h"

namespace tessera::cli {
namespace {

std::string Gpus(const GpuRequest& g) {
  return (g.model.empty() ? "" : g.model + ":") + std::to_string(g.count);
}

}  // namespace

void SetBatchOptionEnv(const BatchOptions& o, tessera::v1::JobSpec* spec) {
  auto set = [&](const char* key, const std::string& value) {
    EnvBlockSet(spec->mutable_env_block(), key, value);
  };
  if (o.ntasks_per_node) set("SLURM_NTASKS_PER_NODE", std::to_string(*o.ntasks_per_node));
  if (o.cpus_per_task) set("SLURM_CPUS_PER_TASK", std::to_string(*o.cpus_per_task));
  if (o.mem_per_cpu_mib) set("SLURM_MEM_PER_CPU", std::to_string(*o.mem_per_cpu_mib));
  if (o.mem_per_gpu_mib) set("SLURM_MEM_PER_GPU", std::to_string(*o.mem_per_gpu_mib));
  if (o.gpus_total) set("SLURM_GPUS", Gpus(*o.gpus_total));
  if (o.gpus_per_node) set("SLURM_GPUS_PER_NODE", Gpus(*o.gpus_per_node));
  if (o.gpus_per_task) set("SLURM_GPUS_PER_TASK", Gpus(*o.gpus_per_task));
  if (o.gpu_bind) set("SLURM_GPU_BIND", *o.gpu_bind);  // srun reads it back (h19 s7)
  if (o.cpus_per_gpu) set("SLURM_CPUS_PER_GPU", std::to_string(*o.cpus_per_gpu));
  if (o.ntasks_per_gpu) set("SLURM_NTASKS_PER_GPU", std::to_string(*o.ntasks_per_gpu));
  if (o.dependency && !o.dependency->empty()) set("SLURM_JOB_DEPENDENCY", *o.dependency);
  if (o.reservation && !o.reservation->empty()) set("SLURM_JOB_RESERVATION", *o.reservation);
  if (o.export_spec) set("SLURM_EXPORT_ENV", *o.export_spec);
  if (o.open_mode && !o.open_mode->empty())
    set("SLURM_OPEN_MODE", (*o.open_mode)[0] == 'a' || (*o.open_mode)[0] == 'A' ? "a" : "t");
}

}  // namespace tessera::cli
