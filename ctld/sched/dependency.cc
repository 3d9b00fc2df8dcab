#include "ctld/sched/dependency.h"

#include "common/duration.h"

namespace tessera::sched {
namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

DepOutcome EvalItem(const DepItem& it, const std::function<DepJobState(uint64_t)>& state_of,
                    bool singleton_free) {
  if (it.type == DepType::kSingleton)
    return singleton_free ? DepOutcome::kSatisfied : DepOutcome::kWaiting;
  DepJobState s = state_of(it.job_id);
  if (s == DepJobState::kUnknown) return DepOutcome::kSatisfied;
  bool ended = s == DepJobState::kCompletedOk || s == DepJobState::kEndedNotOk;
  switch (it.type) {
    case DepType::kAfter:
      return s == DepJobState::kPending ? DepOutcome::kWaiting : DepOutcome::kSatisfied;
    case DepType::kAfterAny:
      return ended ? DepOutcome::kSatisfied : DepOutcome::kWaiting;
    case DepType::kAfterOk:
      return !ended ? DepOutcome::kWaiting
             : s == DepJobState::kCompletedOk ? DepOutcome::kSatisfied
                                              : DepOutcome::kNever;
    case DepType::kAfterNotOk:
      return !ended ? DepOutcome::kWaiting
             : s == DepJobState::kEndedNotOk ? DepOutcome::kSatisfied
                                             : DepOutcome::kNever;
    case DepType::kSingleton:
      break;
  }
  return DepOutcome::kWaiting;
}

}  // namespace

bool Dependency::HasSingleton() const {
  for (const auto& i : items)
    if (i.type == DepType::kSingleton) return true;
  return false;
}

Result<Dependency> ParseDependency(const std::string& s) {
  Dependency d;
  if (s.empty()) return d;
  bool has_comma = s.find(',') != std::string::npos, has_q = s.find('?') != std::string::npos;
  if (has_comma && has_q)
    return InvalidArgument("dependency \"" + s + "\": ',' (all) and '?' (any) cannot be mixed");
  d.any = has_q;
  for (const auto& part : Split(s, has_q ? '?' : ',')) {
    auto fields = Split(part, ':');
    const std::string& type = fields[0];
    DepType t;
    if (type == "singleton") {
      if (fields.size() != 1) return InvalidArgument("dependency \"" + s + "\": singleton takes no job ids");
      d.items.push_back({DepType::kSingleton, 0});
      continue;
    }
    if (type == "after") t = DepType::kAfter;
    else if (type == "afterok") t = DepType::kAfterOk;
    else if (type == "afternotok") t = DepType::kAfterNotOk;
    else if (type == "afterany") t = DepType::kAfterAny;
    else
      return InvalidArgument("dependency \"" + s + "\": unknown type \"" + type +
                             "\" (after, afterok, afternotok, afterany, singleton)");
    if (fields.size() < 2) return InvalidArgument("dependency \"" + s + "\": " + type + " needs job ids");
    for (size_t i = 1; i < fields.size(); ++i) {
      auto id = ParseUint(fields[i], "job id");
      if (!id.ok() || *id == 0)
        return InvalidArgument("dependency \"" + s + "\": bad job id \"" + fields[i] + "\"");
      d.items.push_back({t, *id});
    }
  }
  return d;
}

DepOutcome EvalDependency(const Dependency& dep,
                          const std::function<DepJobState(uint64_t)>& state_of,
                          bool singleton_free) {
  if (dep.items.empty()) return DepOutcome::kSatisfied;
  bool any_waiting = false, any_never = false, any_sat = false;
  for (const auto& it : dep.items) {
    DepOutcome o = EvalItem(it, state_of, singleton_free);
    any_waiting |= o == DepOutcome::kWaiting;
    any_never |= o == DepOutcome::kNever;
    any_sat |= o == DepOutcome::kSatisfied;
  }
  if (dep.any) {
    if (any_sat) return DepOutcome::kSatisfied;
    return any_waiting ? DepOutcome::kWaiting : DepOutcome::kNever;
  }
  if (any_never) return DepOutcome::kNever;
  return any_waiting ? DepOutcome::kWaiting : DepOutcome::kSatisfied;
}

}  // namespace tessera::sched
