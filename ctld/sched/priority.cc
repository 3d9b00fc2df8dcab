#include "ctld/sched/priority.h"

#include <algorithm>
#include <cmath>

namespace tessera::sched {

PriorityContext MakePriorityContext(const ClusterSnapshot& snap, const SchedConfig& cfg) {
  PriorityContext c;
  c.now = snap.now;
  for (const auto& n : snap.nodes) {
    c.cluster_cpus += n.cpus_total;
    c.cluster_gpus += static_cast<int64_t>(n.gpus.size());
  }
  for (const auto& p : snap.partitions) c.max_tier = std::max(c.max_tier, p.priority_tier);
  for (const auto& [name, q] : cfg.qos) c.max_qos_priority = std::max(c.max_qos_priority, q.priority);
  return c;
}

int64_t EffectiveTimeLimit(const JobSnap& j, const PartitionSnap* p, const SchedConfig& cfg) {
  if (j.time_limit > 0) return j.time_limit;
  if (p && p->default_time > 0) return p->default_time;
  if (p && p->max_time > 0) return p->max_time;
  return cfg.default_time;
}

double TimeLimitFactor(int64_t time_limit, const SchedConfig& cfg) {
  constexpr double kMinute = 60;
  double top = double(std::max<int64_t>(cfg.priority_time_limit_max, 120)) / kMinute;
  double x = std::max(double(time_limit), kMinute) / kMinute;
  return 1.0 - std::clamp(std::log(x) / std::log(top), 0.0, 1.0);
}

PriorityFactors MultifactorFactors(const JobSnap& j, int64_t cpus, int64_t gpus, uint32_t tier,
                                   const SchedConfig& cfg, const PriorityContext& ctx,
                                   int64_t time_limit) {
  PriorityFactors f;
  int64_t eligible = j.eligible_time ? j.eligible_time : j.submit_time;
  double age = cfg.priority_max_age > 0
                   ? std::clamp(double(ctx.now - eligible) / double(cfg.priority_max_age), 0.0, 1.0)
                   : 1.0;
  double size = 0;
  if (ctx.cluster_cpus > 0) size = std::max(size, double(cpus) / double(ctx.cluster_cpus));
  if (ctx.cluster_gpus > 0) size = std::max(size, double(gpus) / double(ctx.cluster_gpus));
  size = std::min(size, 1.0);
  if (cfg.favor_small) size = 1.0 - size;
  double part = ctx.max_tier ? double(tier) / double(ctx.max_tier) : 0;
  double qos = 0;
  if (const QosConfig* q = cfg.FindQos(j.qos); q && ctx.max_qos_priority > 0)
    qos = double(q->priority) / double(ctx.max_qos_priority);
  f.age = cfg.weight_age * age;
  f.fairshare = cfg.weight_fairshare * std::clamp(j.fairshare, 0.0, 1.0);
  f.job_size = cfg.weight_job_size * size;
  f.partition = cfg.weight_partition * part;
  f.qos = cfg.weight_qos * qos;
  f.nice = j.nice;
  if (cfg.weight_time_limit) {
    int64_t limit = time_limit > 0 ? time_limit : j.time_limit > 0 ? j.time_limit : cfg.default_time;
    f.time_limit = cfg.weight_time_limit * TimeLimitFactor(limit, cfg);
  }
  double p = f.age + f.fairshare + f.job_size + f.partition + f.qos + f.time_limit;
  f.total = j.priority > 0 ? j.priority : static_cast<int64_t>(std::llround(p)) - j.nice;
  return f;
}

int64_t MultifactorPriority(const JobSnap& j, int64_t cpus, int64_t gpus, uint32_t tier,
                            const SchedConfig& cfg, const PriorityContext& ctx,
                            int64_t time_limit) {
  if (j.priority > 0) return j.priority;
  return MultifactorFactors(j, cpus, gpus, tier, cfg, ctx, time_limit).total;
}

}  // namespace tessera::sched
