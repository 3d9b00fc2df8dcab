#pragma once
// The resource vector: cores, memory (MiB) and whole GPUs by model.
// All resource arithmetic lives here so every part counts the same way.
#include <cstdint>
#include <map>
#include <string>

namespace tessera {

struct ResourceVector {
  uint32_t cpus = 0;
  uint64_t mem_mib = 0;
  std::map<std::string, uint32_t> gpus;  // model -> count; model "" never stored

  uint32_t TotalGpus() const;
  bool IsZero() const;

  ResourceVector& operator+=(const ResourceVector& o);
  // Saturates at zero: subtracting more than is there leaves zero.
  ResourceVector& operator-=(const ResourceVector& o);
  ResourceVector operator*(uint32_t n) const;
  bool operator==(const ResourceVector& o) const = default;

  // True when `this` (free resources) can hold `req`. A GPU request with an empty model
  // ("gpu_any") is satisfied by GPUs of any model.
  bool Fits(const ResourceVector& req, uint32_t any_model_gpus = 0) const;

  // "cpu=4,mem=8G,gres/gpu:a100=2", as Slurm's TRES strings.
  std::string ToString() const;
};

}  // namespace tessera
