#include "ctld/config_dump.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "common/topology_config.h"

namespace tessera::ctld {
namespace {

std::string Secs(int64_t s) { return std::to_string(s) + " sec"; }

// Slurm's D-HH:MM:SS (days only when there are some), as secs2time_str.
std::string Span(int64_t s) {
  if (s < 0) return "UNLIMITED";
  char buf[64];
  int64_t d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60, sec = s % 60;
  if (d > 0)
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(d),
                  static_cast<long long>(h), static_cast<long long>(m), static_cast<long long>(sec));
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(h),
                  static_cast<long long>(m), static_cast<long long>(sec));
  return buf;
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : sep) + x;
  return out;
}

std::string OrNull(const std::string& v) { return v.empty() ? "(null)" : v; }

std::string Enforce(const sched::SchedConfig& s) {
  std::vector<std::string> v;
  if (s.enforce_associations) v.push_back("associations");
  if (s.enforce_limits) v.push_back("limits");
  if (s.enforce_qos) v.push_back("qos");
  return v.empty() ? "none" : Join(v, ",");
}

std::string PriorityFlags(uint32_t f) {
  std::vector<std::string> v;
  if (f & sched::kPriorityFlagNoFairTree) v.push_back("NO_FAIR_TREE");
  if (f & sched::kPriorityFlagMaxTres) v.push_back("MAX_TRES");
  if (f & sched::kPriorityFlagMaxTresGres) v.push_back("MAX_TRES_GRES");
  return Join(v, ",");
}

std::string PreemptMode(const sched::SchedConfig& s) {
  std::string m = sched::PreemptModeName(s.preempt_mode.kind);
  if (m.empty()) m = s.preempt_type == sched::PreemptType::kNone ? "OFF" : "CANCEL";
  return s.preempt_mode.gang ? m + ",GANG" : m;
}

std::string Num(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", d);
  return buf;
}

std::string SchedulerParameters(const sched::SchedConfig& s) {
  // Slurm's bf_window is in minutes; Tessera's other parameters under their own names.
  return "bf_window=" + std::to_string(s.bf_window / 60) +
         ",bf_max_job_reservations=" + std::to_string(s.bf_reservation_depth) +
         ",bf_oldest=" + std::to_string(s.bf_oldest) +
         ",bf_oldest_wait=" + std::to_string(s.bf_oldest_wait) +
         ",bf_max_times=" + std::to_string(s.bf_max_times) +
         ",sched_score_window=" + std::to_string(s.score_window) +
         ",preempt_depth=" + std::to_string(s.preempt_depth) +
         ",mig_plan_depth=" + std::to_string(s.mig_plan_depth) +
         ",mig_reconfig_seconds=" + std::to_string(s.mig_reconfig_seconds) +
         ",default_time=" + std::to_string(s.default_time) +
         ",binpack_weight=" + Num(s.binpack_weight) + ",spread_weight=" + Num(s.spread_weight) +
         ",endtime_weight=" + Num(s.endtime_weight) + ",size_weight=" + Num(s.size_weight) +
         ",scarce_weight=" + Num(s.scarce_weight);
}

}  // namespace

ConfigEntries DumpConfig(const ClusterConfig& c, const sched::SchedConfig& s, int64_t cluster_uid) {
  ConfigEntries e = {
      {"AccountingStorageEnforce", Enforce(s)},
      {"AccountingStorageType", "accounting_storage/tessera"},
      {"AuthType", "auth/munge"},
      {"ClusterName", c.cluster_name},
      {"ControllerSocket", OrNull(c.ctld_socket)},
      {"EnforcePartLimits", c.enforce_part_limits},
      {"HeartbeatInterval", Secs(c.HeartbeatInterval())},
      {"JobAcctGatherType", "jobacct_gather/cgroup"},
      {"KillWait", Secs(c.kill_wait_s)},
      {"MaxArraySize", std::to_string(c.max_array_size)},
      {"MinJobAge", Secs(c.min_job_age_s)},
      {"AuthInfo", c.munge_socket.empty() ? "(null)" : "socket=" + c.munge_socket},
      {"PreemptExemptTime", Span(s.preempt_exempt_time)},
      {"PreemptMode", PreemptMode(s)},
      {"PreemptType", sched::PreemptTypeName(s.preempt_type)},
      {"PriorityDecayHalfLife", Span(s.priority_decay_half_life)},
      {"PriorityFavorSmall", s.favor_small ? "Yes" : "No"},
      {"PriorityFlags", PriorityFlags(s.priority_flags)},
      {"PriorityMaxAge", Span(s.priority_max_age)},
      {"PriorityType", "priority/multifactor"},
      {"PriorityUsageResetPeriod", s.priority_usage_reset},
      {"PriorityWeightAge", std::to_string(s.weight_age)},
      {"PriorityWeightFairShare", std::to_string(s.weight_fairshare)},
      {"PriorityWeightJobSize", std::to_string(s.weight_job_size)},
      {"PriorityWeightPartition", std::to_string(s.weight_partition)},
      {"PriorityWeightQOS", std::to_string(s.weight_qos)},
      {"PriorityWeightTimeLimit", std::to_string(s.weight_time_limit)},
      {"PriorityTimeLimitMax", Span(s.priority_time_limit_max)},
      {"ProctrackType", "proctrack/cgroup"},
      {"SchedulerActions", Join(s.actions, ",")},
      {"SchedulerInterval", Secs(c.sched_interval_s)},
      {"SchedulerParameters", SchedulerParameters(s)},
      {"SchedulerPlugins", Join(s.plugins, ",")},
      {"SchedulerType", "sched/backfill"},
      {"SelectType", "select/cons_tres"},
      {"SlurmUser", c.cluster_user + "(" +
                        (cluster_uid >= 0 ? std::to_string(cluster_uid) : std::string("?")) + ")"},
      {"SlurmctldHost[0]",
       c.ctld_host + (c.ctld_addr.empty() || c.ctld_addr == c.ctld_host ? "" : "(" + c.ctld_addr + ")")},
      {"SlurmctldPort", std::to_string(c.ctld_port)},
      {"SlurmdSpoolDir", c.spool_dir},
      {"SlurmdTimeout", Secs(c.node_timeout_s)},
      {"StateSaveLocation", c.state_dir},
      {"TLSCAFile", OrNull(c.tls_ca)},
      {"TLSCertFile", OrNull(c.tls_cert)},
      {"TLSKeyFile", OrNull(c.tls_key)},
      {"TaskPlugin", "task/cgroup,task/affinity"},
      {"TesseraAdmins", Join(c.admins, ",")},
      {"TesseraLogDir", OrNull(c.log_dir)},
      {"TesseraOperators", Join(c.operators, ",")},
      {"TopologyPlugin", TopologyPluginName(c.topology_kind)},
  };
  if (c.topology_kind != TopologyKind::kFlat) e.push_back({"TopologyFile", c.topology_file});
  if (!s.default_qos.empty()) e.push_back({"DefaultQOS", s.default_qos});
  std::sort(e.begin(), e.end(), [](const auto& a, const auto& b) {
    std::string x = a.first, y = b.first;
    for (auto& ch : x) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (auto& ch : y) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return x < y;
  });
  return e;
}

}  // namespace tessera::ctld
