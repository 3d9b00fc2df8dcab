#include "common/resources.h"

#include "common/duration.h"

namespace tessera {

uint32_t ResourceVector::TotalGpus() const {
  uint32_t n = 0;
  for (const auto& [model, count] : gpus) n += count;
  return n;
}

bool ResourceVector::IsZero() const { return cpus == 0 && mem_mib == 0 && TotalGpus() == 0; }

ResourceVector& ResourceVector::operator+=(const ResourceVector& o) {
  cpus += o.cpus;
  mem_mib += o.mem_mib;
  for (const auto& [model, count] : o.gpus) gpus[model] += count;
  return *this;
}

ResourceVector& ResourceVector::operator-=(const ResourceVector& o) {
  cpus = cpus > o.cpus ? cpus - o.cpus : 0;
  mem_mib = mem_mib > o.mem_mib ? mem_mib - o.mem_mib : 0;
  for (const auto& [model, count] : o.gpus) {
    auto it = gpus.find(model);
    if (it == gpus.end()) continue;
    it->second = it->second > count ? it->second - count : 0;
    if (it->second == 0) gpus.erase(it);
  }
  return *this;
}

ResourceVector ResourceVector::operator*(uint32_t n) const {
  ResourceVector r;
  r.cpus = cpus * n;
  r.mem_mib = mem_mib * n;
  for (const auto& [model, count] : gpus) r.gpus[model] = count * n;
  return r;
}

bool ResourceVector::Fits(const ResourceVector& req, uint32_t any_model_gpus) const {
  if (req.cpus > cpus || req.mem_mib > mem_mib) return false;
  uint32_t spare = 0;
  for (const auto& [model, have] : gpus) {
    auto it = req.gpus.find(model);
    uint32_t want = it == req.gpus.end() ? 0 : it->second;
    if (want > have) return false;
    spare += have - want;
  }
  for (const auto& [model, want] : req.gpus)
    if (want > 0 && !gpus.count(model)) return false;
  return any_model_gpus <= spare;
}

std::string ResourceVector::ToString() const {
  std::string s = "cpu=" + std::to_string(cpus);
  if (mem_mib) s += ",mem=" + FormatMemMiB(mem_mib);
  uint32_t total = TotalGpus();
  if (total) s += ",gres/gpu=" + std::to_string(total);
  for (const auto& [model, count] : gpus)
    if (count) s += ",gres/gpu:" + model + "=" + std::to_string(count);
  return s;
}

}  // namespace tessera
