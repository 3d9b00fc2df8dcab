#include "ctld/usage.h"

#include <algorithm>
#include <set>

#include "ctld/nodes/gpu_use.h"

namespace tessera::ctld {
namespace {

// The configured type of GPU `index` on a node (Gres=gpu:a100:2 order), else its model.
std::string GpuType(const NodeRuntime& n, uint32_t index) {
  uint32_t i = 0;
  if (n.config)
    for (const auto& [type, count] : n.config->gres_gpus)
      for (uint32_t k = 0; k < count; ++k, ++i)
        if (i == index) return type;
  for (const auto& g : n.gpus)
    if (g.index == index) return g.model;
  return "";
}

std::string MigProfileOf(const NodeRuntime& n, const std::string& uuid) {
  for (const auto& g : n.gpus)
    for (const auto& m : g.mig)
      if (m.uuid == uuid) return m.profile;
  return "";
}

}  // namespace

sched::TresCount JobTres(const JobRecord& j, NodeTable& nodes) {
  sched::TresCount t;
  for (const auto& a : j.alloc) {
    t.cpu += a.cpus;
    t.mem_mib += double(a.mem_mib);
    t.node += 1;
    NodeRuntime* n = nodes.Find(a.node);
    if (a.mps > 0 || a.shards > 0) {  // a share of one GPU, not the GPU
      t.gpu += a.mps / 100.0;
      continue;
    }
    for (uint32_t g : a.gpu_indices) sched::AddGpuUnit(t, n ? GpuType(*n, g) : "", false);
    for (const auto& u : a.mig_uuids) sched::AddGpuUnit(t, n ? MigProfileOf(*n, u) : "", true);
  }
  return t;
}

void UsageLedger::Reset(int64_t at, Batch* out) {
  for (auto& [key, u] : usage_) {
    u = 0;
    if (out) out->PutUsage({key.first, key.second, 0});
  }
  last_reset_ = at;
}

void UsageLedger::Load(const std::vector<UsageRow>& rows, int64_t last_charge,
                       int64_t last_reset, int64_t now, const sched::SchedConfig& cfg,
                       Batch* out) {
  usage_.clear();
  charging_.clear();
  double decay = last_charge > 0 ? sched::DecayOver(cfg.priority_decay_half_life,
                                                    double(std::max<int64_t>(0, now - last_charge)))
                                 : 1.0;
  for (const auto& r : rows) usage_[{r.account, r.user}] = r.usage * decay;
  last_ = now;
  last_reset_ = last_reset > 0 ? last_reset : now;
  auto period = sched::ParseResetPeriod(cfg.priority_usage_reset);
  if (period.ok() && *period == sched::ResetPeriod::kNow) Reset(now, nullptr);
  if (out) {
    for (const auto& [key, u] : usage_) out->PutUsage({key.first, key.second, u});
    out->SetMeta("usage_last_charge", std::to_string(last_));
    out->SetMeta("usage_last_reset", std::to_string(last_reset_));
  }
}

void UsageLedger::Advance(int64_t now, const std::vector<ChargeJob>& running,
                          const std::function<int64_t(uint64_t)>& ended,
                          const sched::SchedConfig& cfg, Batch* out) {
  if (now <= last_) return;
  int64_t hl = cfg.priority_decay_half_life;
  auto period = sched::ParseResetPeriod(cfg.priority_usage_reset);
  if (period.ok())
    for (int64_t r = sched::NextReset(*period, last_reset_); r > 0 && r <= now;
         r = sched::NextReset(*period, r))
      Reset(r, out);
  std::set<std::pair<std::string, std::string>> changed;
  double decay = sched::DecayOver(hl, double(now - last_));
  for (auto& [key, u] : usage_) {
    if (u == 0) continue;
    u *= decay;
    changed.insert(key);
  }
  auto charge = [&](const ChargeJob& j, int64_t end) {
    int64_t from = std::max({last_, j.start, last_reset_});
    double run = double(std::min(end, now) - from);
    if (run <= 0 || j.billing <= 0) return;
    usage_[{j.account, j.user}] += j.billing * run * sched::DecayOver(hl, run);
    changed.insert({j.account, j.user});
  };
  std::map<uint64_t, ChargeJob> still;
  std::set<uint64_t> done;
  for (const auto& j : running) {
    if (!done.insert(j.id).second) continue;
    charge(j, j.end > 0 ? j.end : now);
    if (j.end == 0) still[j.id] = j;
  }
  for (const auto& [id, j] : charging_) {
    if (done.count(id)) continue;
    int64_t end = ended ? ended(id) : 0;  // ended since the last charge: up to its end
    charge(j, end > 0 ? end : now);
  }
  charging_ = std::move(still);
  last_ = now;
  if (!out) return;
  for (const auto& key : changed) out->PutUsage({key.first, key.second, usage_[key]});
  out->SetMeta("usage_last_charge", std::to_string(last_));
  out->SetMeta("usage_last_reset", std::to_string(last_reset_));
}

}  // namespace tessera::ctld
