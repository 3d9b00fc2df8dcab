#include "ctld/sched/sched_config.h"

#include <algorithm>
#include <cstdlib>

#include "common/duration.h"
#include "ctld/sched/registry.h"
#include "ctld/sched/sched_config_fairshare.h"

namespace tessera::sched {

// Node order (issue 17 §2, sched_config.h; nodeorder in plugins/order_plugins.cc): the default
// weights of the scores that keep small and long jobs off the large nodes whole-node jobs wait
// for. endtime: 1 when the node would not empty before the job ends anyway, 0 when the job
// delays its emptying by its whole time limit; size: small nodes first. SchedulerParameters
// endtime_weight=0,size_weight=0 gives plain bin packing (binpack_weight) as before.
const double kDefaultEndtimeWeight = 1;
const double kDefaultSizeWeight = 1;
// scarce (session 8): 1 - fewest/hosts, hosts = the partition's nodes that could run a job
// asking for the node's whole capacity, features and GPU models (order_plugins.cc
// ScarceScores): keeps one-GPU, CPU-only and unconstrained jobs off the few nodes that are the
// only fit for the partition's largest or constrained jobs. 4 = twice the most binpack +
// endtime can add (2): an idle node whose hosts are at least twice the rarest kind's
// (score >= 0.5) wins over a partly used node of the rarest kind. scarce_weight=0 turns it off.
const double kDefaultScarceWeight = 4;
// The default policy's backfill reservations (BuildSchedConfig; 1 = EASY).
constexpr uint32_t kDefaultPolicyDepth = 4;
// The default policy's starvation bound (bf_oldest, sched_config.h): the oldest eligible job
// of each partition is started or reserved before the priority order.
constexpr uint32_t kDefaultPolicyOldest = 1;
constexpr int64_t kDefaultPolicyOldestWait = 3600;
namespace {

Status Bad(const std::string& where, const ConfigPair& p, const std::string& why) {
  return InvalidArgument(where + ": invalid value \"" + p.value + "\" for " + p.raw_key + ": " +
                         why);
}

Result<int64_t> Int(const std::string& where, const ConfigPair& p) {
  if (ToLower(p.value) == "unlimited" || p.value == "-1") return int64_t{-1};
  auto n = ParseUint(p.value, p.raw_key);
  if (!n.ok()) return Bad(where, p, "expected a non-negative integer");
  return static_cast<int64_t>(*n);
}

Result<int64_t> Time(const std::string& where, const ConfigPair& p) {
  auto t = ParseTimeLimit(p.value);
  if (!t.ok()) return Bad(where, p, "expected a time such as 60, 1:00:00 or 1-0");
  return *t;
}

// Issue 15: QOSName=... TopologyMode=required|preferred.
Status ParseQosTopologyMode(const std::string& where, const ConfigPair& p, QosConfig& q) {
  std::string v = ToLower(p.value);
  if (v != "required" && v != "preferred")
    return Bad(where, p, "expected required or preferred");
  q.topology_mode = v == "required" ? 1 : 0;
  return Status::Ok();
}

Status ParseQos(const ConfigLine& l, SchedConfig& c) {
  QosConfig q;
  q.where = l.Where();
  bool is_default = false;
  for (const auto& p : l.pairs) {
    const std::string& k = p.key;
    Result<int64_t> v = int64_t{0};
    bool preempt_key = false;  // issue 16 §4 (preempt_config.cc)
    TESSERA_RETURN_IF_ERROR(ParseQosPreemptKey(p, q, &preempt_key));
    if (preempt_key) continue;
    if (k == "qosname") {
      q.name = p.value;
    } else if (k == "priority") {
      if (!(v = Int(q.where, p)).ok()) return v.status();
      q.priority = *v;
    } else if (k == "maxwall" || k == "maxwalldurationperjob") {
      if (!(v = Time(q.where, p)).ok()) return v.status();
      q.max_wall = *v;
    } else if (k == "maxjobsperuser" || k == "maxjobspu") {
      if (!(v = Int(q.where, p)).ok()) return v.status();
      q.max_jobs_per_user = *v;
    } else if (k == "maxsubmitjobsperuser" || k == "maxsubmitjobspu") {
      if (!(v = Int(q.where, p)).ok()) return v.status();
      q.max_submit_jobs_per_user = *v;
    } else if (k == "grpjobs") {
      if (!(v = Int(q.where, p)).ok()) return v.status();
      q.grp_jobs = *v;
    } else if (k == "maxtresperuser" || k == "maxtrespu" || k == "grptres") {
      auto t = ParseTres(p.value);
      if (!t.ok()) return Bad(q.where, p, t.status().message());
      (k == "grptres" ? q.grp_tres : q.max_tres_per_user) = *t;
    } else if (k == "default") {
      is_default = ToLower(p.value) == "yes";
    } else if (k == "topologymode") {
      TESSERA_RETURN_IF_ERROR(ParseQosTopologyMode(q.where, p, q));
    } else {
      c.warnings.push_back(q.where + ": unknown QOS key " + p.raw_key + "; ignored");
    }
  }
  if (q.name.empty()) return InvalidArgument(q.where + ": QOSName needs a name");
  if (c.qos.count(q.name)) return InvalidArgument(q.where + ": QOS " + q.name + " defined twice");
  if (is_default) c.default_qos = q.name;
  c.qos[q.name] = q;
  return Status::Ok();
}

Status ParseAccount(const ConfigLine& l, SchedConfig& c) {
  AccountConfig a;
  a.where = l.Where();
  for (const auto& p : l.pairs) {
    if (p.key == "accountname") {
      a.name = p.value;
    } else if (p.key == "parent") {
      a.parent = p.value == "root" ? "" : p.value;  // "" = under root (sched_config.h)
    } else if (p.key == "grptres") {
      auto t = ParseTres(p.value);
      if (!t.ok()) return Bad(a.where, p, t.status().message());
      a.grp_tres = *t;
    } else if (p.key == "grpjobs") {
      auto v = Int(a.where, p);
      if (!v.ok()) return v.status();
      a.grp_jobs = *v;
    } else if (auto fs = ParseAccountFairshare(a.where, p, a); !fs.ok() || *fs) {
      if (!fs.ok()) return fs.status();  // Fairshare= (issue 16 §3)
    } else {
      auto known = ParseAccountExtra(p, a);  // issue 16 keys (sched_config_assoc.cc)
      if (!known.ok()) return Bad(a.where, p, known.status().message());
      if (!*known) c.warnings.push_back(a.where + ": unknown account key " + p.raw_key + "; ignored");
    }
  }
  if (a.name.empty()) return InvalidArgument(a.where + ": AccountName needs a name");
  a.limits.grp_tres = a.grp_tres;  // one truth for GrpTRES/GrpJobs (sched_config.h)
  a.limits.grp_jobs = a.grp_jobs;
  c.accounts[a.name] = a;
  return Status::Ok();
}

Status ParseSchedParams(const std::string& where, const ConfigPair& p, SchedConfig& c) {
  std::vector<std::string> keys;
  for (const auto& opt : SplitList(p.value)) keys.push_back(ToLower(opt.substr(0, opt.find('='))));
  auto named = [&](const char* k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); };
  for (const auto& opt : SplitList(p.value)) {
    size_t eq = opt.find('=');
    std::string key = ToLower(opt.substr(0, eq));
    std::string val = eq == std::string::npos ? "" : opt.substr(eq + 1);
    auto num = [&](const char* what) -> Result<uint64_t> {
      auto n = ParseUint(val, what);
      if (!n.ok()) return Bad(where, p, key + " expects a non-negative integer");
      return *n;
    };
    auto dbl = [&](double* dst) -> Status {
      char* end = nullptr;
      double d = std::strtod(val.c_str(), &end);
      if (val.empty() || *end || d < 0) return Bad(where, p, key + " expects a number >= 0");
      *dst = d;
      return Status::Ok();
    };
    if (key == "bf_reservation_depth" || key == "bf_max_job_reservations") {
      auto n = num("bf_reservation_depth");
      if (!n.ok()) return n.status();
      c.bf_reservation_depth = static_cast<uint32_t>(*n);
    } else if (key == "bf_oldest") {  // issue 17 §2 (sched_config.h)
      auto n = num("bf_oldest");
      if (!n.ok()) return n.status();
      c.bf_oldest = static_cast<uint32_t>(std::min<uint64_t>(*n, 0xffffffffu));
    } else if (key == "bf_oldest_wait") {  // seconds
      auto n = num("bf_oldest_wait");
      if (!n.ok()) return n.status();
      c.bf_oldest_wait = static_cast<int64_t>(std::min<uint64_t>(*n, 100ull * 365 * 86400));
    } else if (key == "bf_window") {  // minutes, as Slurm
      auto n = num("bf_window");
      if (!n.ok()) return n.status();
      c.bf_window = static_cast<int64_t>(*n) * 60;
    } else if (key == "bf_max_times") {
      auto n = num("bf_max_times");
      if (!n.ok()) return n.status();
      c.bf_max_times = static_cast<uint32_t>(std::max<uint64_t>(1, *n));
    } else if (key == "sched_score_window") {
      auto n = num("sched_score_window");
      if (!n.ok()) return n.status();
      c.score_window = static_cast<uint32_t>(std::max<uint64_t>(1, *n));
    } else if (key == "mig_reconfig_seconds") {
      auto n = num("mig_reconfig_seconds");
      if (!n.ok()) return n.status();
      c.mig_reconfig_seconds = static_cast<int64_t>(*n);
    } else if (key == "mig_plan_depth") {
      auto n = num("mig_plan_depth");
      if (!n.ok()) return n.status();
      c.mig_plan_depth = static_cast<uint32_t>(*n);
    } else if (key == "binpack_weight") {
      TESSERA_RETURN_IF_ERROR(dbl(&c.binpack_weight));
    } else if (key == "spread_weight") {
      TESSERA_RETURN_IF_ERROR(dbl(&c.spread_weight));
      // Spreading asks for the opposite of the packing scores: they stay off unless named.
      if (c.spread_weight > 0 && !named("endtime_weight")) c.endtime_weight = 0;
      if (c.spread_weight > 0 && !named("size_weight")) c.size_weight = 0;
      if (c.spread_weight > 0 && !named("scarce_weight")) c.scarce_weight = 0;
    } else if (key == "endtime_weight") {
      TESSERA_RETURN_IF_ERROR(dbl(&c.endtime_weight));
    } else if (key == "size_weight") {
      TESSERA_RETURN_IF_ERROR(dbl(&c.size_weight));
    } else if (key == "scarce_weight") {
      TESSERA_RETURN_IF_ERROR(dbl(&c.scarce_weight));
    } else if (key == "preempt_depth") {  // issue 16 §4
      auto n = num("preempt_depth");
      if (!n.ok()) return n.status();
      c.preempt_depth = static_cast<uint32_t>(*n);
    } else if (key == "default_time") {
      auto t = ParseTimeLimit(val);
      if (!t.ok()) return Bad(where, p, "default_time expects a time limit");
      c.default_time = *t < 0 ? 365 * 86400 : *t;
    } else {
      c.warnings.push_back(where + ": SchedulerParameters option " + key +
                           " is not implemented by Tessera; ignored");
    }
  }
  return Status::Ok();
}

Status ParseGlobal(const std::string& where, const ConfigPair& p, SchedConfig& c) {
  const std::string& k = p.key;
  bool preempt_key = false;  // issue 16 §4 (preempt_config.cc)
  TESSERA_RETURN_IF_ERROR(ParsePreemptGlobal(where, p, c, &preempt_key));
  if (preempt_key) return Status::Ok();
  Registry reg = Registry::Builtin();
  if (k == "scheduleractions") {
    c.actions = SplitList(ToLower(p.value));
    for (const auto& a : c.actions) {
      if (!reg.HasAction(a))
        return InvalidArgument(where + ": unknown scheduler action \"" + a + "\" in " + p.raw_key +
                               " (known: " + reg.ActionNames() + ")");
      auto made = reg.MakeAction(a, c);  // reserved names (preempt, reclaim) refuse here
      if (!made.ok()) return InvalidArgument(where + ": " + made.status().message());
    }
    return Status::Ok();
  }
  if (k == "schedulerplugins") {
    c.plugins = SplitList(ToLower(p.value));
    for (const auto& a : c.plugins)
      if (!reg.HasPlugin(a))
        return InvalidArgument(where + ": unknown scheduler plugin \"" + a + "\" in " + p.raw_key +
                               " (known: " + reg.PluginNames() + ")");
    return Status::Ok();
  }
  if (k == "schedulerparameters") return ParseSchedParams(where, p, c);
  if (k == "accountingstorageenforce") return ParseEnforce(where, p.value, c);
  if (auto fs = ParseFairshareGlobal(where, p, c); !fs.ok() || *fs) return fs.status();
  if (k == "prioritymaxage") {
    auto t = Time(where, p);
    if (!t.ok()) return t.status();
    c.priority_max_age = *t < 0 ? 0 : *t;
    return Status::Ok();
  }
  if (k == "prioritytimelimitmax") {  // issue 17 §2 (priority.h)
    auto t = Time(where, p);
    if (!t.ok()) return t.status();
    if (*t < 120) return Bad(where, p, "expected a time of at least 2 minutes");
    c.priority_time_limit_max = *t;
    return Status::Ok();
  }
  if (k == "priorityfavorsmall") {
    c.favor_small = ToLower(p.value) == "yes";
    return Status::Ok();
  }
  uint32_t* w = k == "priorityweightage"         ? &c.weight_age
                : k == "priorityweightfairshare" ? &c.weight_fairshare
                : k == "priorityweightjobsize"   ? &c.weight_job_size
                : k == "priorityweightpartition" ? &c.weight_partition
                : k == "priorityweightqos"       ? &c.weight_qos
                : k == "priorityweighttimelimit" ? &c.weight_time_limit  // issue 17 §2
                                                 : nullptr;
  if (w) {
    auto n = ParseUint(p.value, p.raw_key);
    if (!n.ok() || *n > 0xffffffffull) return Bad(where, p, "expected an integer weight");
    *w = static_cast<uint32_t>(*n);
  } else if (k.rfind("priorityweight", 0) == 0) {  // PriorityWeightTRES, a typo...
    c.warnings.push_back(where + ": " + p.raw_key + " is not a priority weight Tessera implements " +
                         "(Age, Fairshare, JobSize, Partition, QOS, TimeLimit); ignored");
  }
  return Status::Ok();
}

}  // namespace

Result<TresLimit> ParseTres(const std::string& s) {
  TresLimit t;
  for (const auto& item : SplitList(s)) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) return InvalidArgument("TRES item \"" + item + "\" has no '='");
    std::string name = ToLower(item.substr(0, eq));
    std::string val = item.substr(eq + 1);
    if (name == "mem") {
      auto m = ParseMemMiB(val);
      if (!m.ok()) return InvalidArgument("bad memory in TRES item \"" + item + "\"");
      t.mem_mib = static_cast<int64_t>(*m);
      continue;
    }
    auto n = ParseUint(val, name);
    if (!n.ok()) return InvalidArgument("bad count in TRES item \"" + item + "\"");
    int64_t v = static_cast<int64_t>(*n);
    if (name == "cpu") {
      t.cpu = v;
    } else if (name == "node") {
      t.node = v;
    } else if (name == "gres/gpu" || name.rfind("gres/gpu:", 0) == 0) {
      t.gpu = v;
    } else {
      return InvalidArgument("unknown TRES \"" + name + "\" (known: cpu, mem, node, gres/gpu)");
    }
  }
  return t;
}

const QosConfig* SchedConfig::FindQos(const std::string& name) const {
  auto it = qos.find(name.empty() ? default_qos : name);
  return it == qos.end() ? nullptr : &it->second;
}

Result<SchedConfig> BuildSchedConfig(const std::vector<ConfigLine>& lines) {
  SchedConfig c;
  // Default policy (sched_config.h): a file that names any PriorityWeight* key gets Slurm's
  // formula, with the weights it does not name 0 and Slurm's PriorityMaxAge (7-0), and EASY
  // backfill (depth 1); the default policy reserves for the first kDefaultPolicyDepth blocked
  // jobs (issue 17 §2: the whole-node job second in line is protected too) and, before the
  // priority order, the oldest eligible job of each partition (bf_oldest: the starvation
  // bound; Slurm's formula has none). An explicit bf_reservation_depth or bf_oldest wins.
  c.bf_reservation_depth = kDefaultPolicyDepth;
  c.bf_oldest = kDefaultPolicyOldest;
  c.bf_oldest_wait = kDefaultPolicyOldestWait;
  for (const auto& l : lines)
    for (const auto& p : l.pairs)
      if (l.Head() != "nodename" && p.key.rfind("priorityweight", 0) == 0) {
        c.weight_age = c.weight_time_limit = 0;
        c.priority_max_age = 7 * 86400;
        c.bf_reservation_depth = 1;
        c.bf_oldest = 0;
      }
  PartitionPreempt part_preempt_default;  // issue 16 §4: PartitionName=DEFAULT
  for (const auto& l : lines) {
    if (l.pairs.empty()) continue;
    const std::string& head = l.Head();
    if (head == "partitionname") {
      TESSERA_RETURN_IF_ERROR(ParsePartitionPreempt(l, c, part_preempt_default));
      TESSERA_RETURN_IF_ERROR(ParseFairsharePartition(l, c));  // issue 16 §3
    } else if (head == "qosname") {
      TESSERA_RETURN_IF_ERROR(ParseQos(l, c));
    } else if (head == "accountname") {
      TESSERA_RETURN_IF_ERROR(ParseAccount(l, c));
    } else if (head == "username") {
      TESSERA_RETURN_IF_ERROR(ParseUserLine(l, c));
    } else if (head != "nodename") {
      for (const auto& p : l.pairs) TESSERA_RETURN_IF_ERROR(ParseGlobal(l.Where(), p, c));
    }
  }
  for (const auto& [name, a] : c.accounts)
    if (!a.parent.empty() && !c.accounts.count(a.parent) && a.parent != "root")
      return InvalidArgument(a.where + ": account " + name + " has unknown parent " + a.parent);
  TESSERA_RETURN_IF_ERROR(CheckAssocLines(c));
  TESSERA_RETURN_IF_ERROR(FinishPreemptConfig(c));
  return c;
}

}  // namespace tessera::sched
