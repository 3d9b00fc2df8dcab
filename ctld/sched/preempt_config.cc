// Preemption keys of tessera.conf (preempt_config.h): parsing and the checks made once every
// line is read.
#include "ctld/sched/preempt_config.h"

#include <algorithm>

#include "common/duration.h"
#include "ctld/sched/sched_config.h"

namespace tessera::sched {
namespace {

Status BadKey(const std::string& where, const ConfigPair& p, const std::string& why) {
  return InvalidArgument(where + ": invalid value \"" + p.value + "\" for " + p.raw_key + ": " +
                         why);
}

Result<int64_t> Seconds(const std::string& where, const ConfigPair& p) {
  auto n = ParseUint(p.value, p.raw_key);
  if (!n.ok()) return BadKey(where, p, "expected seconds (a non-negative integer)");
  return static_cast<int64_t>(*n);
}

Result<int64_t> Duration(const std::string& where, const ConfigPair& p) {
  auto t = ParseTimeLimit(p.value);
  if (!t.ok() || *t < 0) return BadKey(where, p, "expected a time such as 60, 0:10:00 or 1-0");
  return *t;
}

}  // namespace

Result<PreemptModeSpec> ParsePreemptMode(const std::string& v) {
  PreemptModeSpec m;
  bool any = false;
  for (const auto& raw : SplitList(ToLower(v))) {
    any = true;
    PreemptModeKind k = PreemptModeKind::kUnset;
    if (raw == "gang") {
      m.gang = true;
      continue;
    }
    if (raw == "off") k = PreemptModeKind::kOff;
    else if (raw == "cancel") k = PreemptModeKind::kCancel;
    else if (raw == "requeue") k = PreemptModeKind::kRequeue;
    else if (raw == "suspend") k = PreemptModeKind::kSuspend;
    else if (raw == "cluster") k = PreemptModeKind::kUnset;
    else if (raw == "within" || raw == "priority")
      return InvalidArgument("PreemptMode option " + raw + " is not implemented by Tessera");
    else
      return InvalidArgument("unknown PreemptMode \"" + raw +
                             "\" (expected OFF, CANCEL, REQUEUE, SUSPEND, optionally with ,GANG)");
    if (m.kind != PreemptModeKind::kUnset && k != PreemptModeKind::kUnset && k != m.kind)
      return InvalidArgument("PreemptMode names two modes (" + PreemptModeName(m.kind) + " and " +
                             PreemptModeName(k) + ")");
    if (k != PreemptModeKind::kUnset) m.kind = k;
  }
  if (!any) return InvalidArgument("empty PreemptMode");
  if (m.gang && m.kind == PreemptModeKind::kUnset) m.kind = PreemptModeKind::kOff;
  return m;
}

Result<PreemptType> ParsePreemptType(const std::string& v) {
  std::string s = ToLower(v);
  if (s == "preempt/none" || s == "none") return PreemptType::kNone;
  if (s == "preempt/qos" || s == "qos") return PreemptType::kQos;
  if (s == "preempt/partition_prio" || s == "partition_prio") return PreemptType::kPartitionPrio;
  return InvalidArgument("unknown PreemptType \"" + v +
                         "\" (expected preempt/none, preempt/qos or preempt/partition_prio)");
}

std::string PreemptModeName(PreemptModeKind k) {
  switch (k) {
    case PreemptModeKind::kOff: return "OFF";
    case PreemptModeKind::kCancel: return "CANCEL";
    case PreemptModeKind::kRequeue: return "REQUEUE";
    case PreemptModeKind::kSuspend: return "SUSPEND";
    default: return "";
  }
}

std::string PreemptTypeName(PreemptType t) {
  switch (t) {
    case PreemptType::kQos: return "preempt/qos";
    case PreemptType::kPartitionPrio: return "preempt/partition_prio";
    default: return "preempt/none";
  }
}

Status ParseQosPreemptKey(const ConfigPair& p, QosConfig& q, bool* handled) {
  *handled = true;
  const std::string& k = p.key;
  if (k == "preempt") {
    q.preempt = SplitList(p.value);
  } else if (k == "preemptmode") {
    auto m = ParsePreemptMode(p.value);
    if (!m.ok()) return BadKey(q.where, p, m.status().message());
    q.preempt_mode = m->kind;
  } else if (k == "gracetime") {
    auto s = Seconds(q.where, p);
    if (!s.ok()) return s.status();
    q.grace_time = *s;
  } else if (k == "preemptexempttime") {
    auto s = Duration(q.where, p);
    if (!s.ok()) return s.status();
    q.preempt_exempt_time = *s;
  } else {
    *handled = false;
  }
  return Status::Ok();
}

Status ParsePreemptGlobal(const std::string& where, const ConfigPair& p, SchedConfig& c,
                          bool* handled) {
  *handled = true;
  const std::string& k = p.key;
  if (k == "preempttype") {
    auto t = ParsePreemptType(p.value);
    if (!t.ok()) return BadKey(where, p, t.status().message());
    c.preempt_type = *t;
  } else if (k == "preemptmode") {
    auto m = ParsePreemptMode(p.value);
    if (!m.ok()) return BadKey(where, p, m.status().message());
    c.preempt_mode = *m;
  } else if (k == "preemptexempttime") {
    auto s = Duration(where, p);
    if (!s.ok()) return s.status();
    c.preempt_exempt_time = *s;
  } else {
    *handled = false;
  }
  return Status::Ok();
}

Status ParsePartitionPreempt(const ConfigLine& l, SchedConfig& c, PartitionPreempt& defaults) {
  bool is_default = ToLower(l.pairs[0].value) == "default";
  PartitionPreempt pp = defaults;
  bool any = false;
  for (size_t i = 1; i < l.pairs.size(); ++i) {
    const ConfigPair& p = l.pairs[i];
    if (p.key == "preemptmode") {
      auto m = ParsePreemptMode(p.value);
      if (!m.ok()) return BadKey(l.Where(), p, m.status().message());
      pp.mode = m->kind;
      any = true;
    } else if (p.key == "gracetime") {
      auto s = Seconds(l.Where(), p);
      if (!s.ok()) return s.status();
      pp.grace_time = *s;
      any = true;
    }
  }
  if (is_default) {
    defaults = pp;
  } else if (any || pp.mode != PreemptModeKind::kUnset || pp.grace_time) {
    c.partition_preempt[l.pairs[0].value] = pp;
  }
  return Status::Ok();
}

Status FinishPreemptConfig(SchedConfig& c) {
  for (const auto& [name, q] : c.qos)
    for (const auto& v : q.preempt)
      if (!c.qos.count(v))
        return InvalidArgument(q.where + ": QOS " + name + " Preempt= names unknown QOS " + v);
  bool has_action = std::count(c.actions.begin(), c.actions.end(), "preempt") > 0;
  if (c.preempt_type == PreemptType::kNone) {
    if (has_action)
      c.warnings.push_back("SchedulerActions names preempt but PreemptType is preempt/none: "
                           "nothing will be preempted");
    return Status::Ok();
  }
  if (c.preempt_mode.kind == PreemptModeKind::kUnset) c.preempt_mode.kind = PreemptModeKind::kCancel;
  if (c.preempt_mode.gang)
    c.warnings.push_back("PreemptMode GANG (time-slicing) is not implemented by Tessera: a "
                         "suspended job stays suspended until its preemptor ends");
  static const std::vector<std::string> kDefaultActions = SchedConfig().actions;
  if (!has_action && c.actions == kDefaultActions) {
    auto it = std::find(c.actions.begin(), c.actions.end(), "allocate");
    c.actions.insert(it == c.actions.end() ? c.actions.end() : it + 1, "preempt");
  } else if (!has_action) {
    c.warnings.push_back("PreemptType is " + PreemptTypeName(c.preempt_type) +
                         " but SchedulerActions does not name preempt: nothing will be preempted");
  }
  return Status::Ok();
}

}  // namespace tessera::sched
