#include "ctld/submit_checks.h"

#include <string_view>
#include <utility>
#include <vector>

#include "common/control_chars.h"
#include "common/input_limits.h"
#include "ctld/sched/dependency.h"

namespace tessera::ctld {
namespace {

Status CheckNice(int64_t nice, const Caller& caller, const char* what) {
  if (nice < -kMaxNice || nice > kMaxNice)
    return InvalidArgument(std::string("Invalid nice value ") + std::to_string(nice) + " (" + what +
                           "): must be between -" + std::to_string(kMaxNice) + " and " +
                           std::to_string(kMaxNice));
  if (nice < 0 && !caller.admin && !caller.operator_)
    return PermissionDenied(std::string("Access/permission denied: only operators and "
                                        "administrators may set a negative nice value (") +
                            what + "=" + std::to_string(nice) + ")");
  return Status::Ok();
}

Status CheckTexts(const JobSpec& spec) {
  std::vector<std::pair<const char*, std::string_view>> fields = {
      {"job name (--job-name)", spec.name.str()},
      {"comment (--comment)", spec.comment.str()},
      {"account (--account)", spec.account.str()},
      {"QOS (--qos)", spec.qos.str()},
      {"partition (--partition)", spec.partition.str()},
      {"working directory (--chdir)", spec.workdir.str()},
      {"output file (--output)", spec.stdout_pattern.str()},
      {"error file (--error)", spec.stderr_pattern.str()},
      {"constraint (--constraint)", spec.constraint.str()},
      {"node list (--nodelist)", spec.nodelist.str()},
      {"excluded nodes (--exclude)", spec.exclude.str()},
      {"dependency (--dependency)", spec.dependency.str()},
      {"array (--array)", spec.array.str()},
  };
  if (!spec.argv.empty()) fields.push_back({"command (script path)", spec.argv.front()});
  for (const auto& g : spec.task_groups) fields.push_back({"task group name", g.name.str()});
  for (const auto& [what, text] : fields) TESSERA_RETURN_IF_ERROR(CheckNoControlChars(what, text));
  return Status::Ok();
}

const char* DepTypeName(sched::DepType t) {
  switch (t) {
    case sched::DepType::kAfter: return "after";
    case sched::DepType::kAfterOk: return "afterok";
    case sched::DepType::kAfterNotOk: return "afternotok";
    case sched::DepType::kAfterAny: return "afterany";
    case sched::DepType::kSingleton: return "singleton";
  }
  return "?";
}

}  // namespace

Status CheckSubmitInput(const JobSpec& spec, const RequestExtras& extras, const Caller& caller,
                        int64_t now) {
  TESSERA_RETURN_IF_ERROR(CheckNice(spec.nice, caller, "--nice"));
  TESSERA_RETURN_IF_ERROR(CheckTexts(spec));
  TESSERA_RETURN_IF_ERROR(CheckTimeAhead("--begin", spec.begin_time, now));
  TESSERA_RETURN_IF_ERROR(CheckTimeAhead("--deadline", extras.deadline, now));
  TESSERA_RETURN_IF_ERROR(CheckTimeLimit("--time", spec.time_limit_s));
  TESSERA_RETURN_IF_ERROR(CheckTimeLimit("--time-min", extras.time_min_s));
  std::vector<std::string_view> argv(spec.argv.begin(), spec.argv.end());
  return CheckExecLimits(spec.env_block.str(), argv);
}

Status CheckUpdateInput(const JobUpdate& u, const Caller& caller) {
  if (u.set_nice) TESSERA_RETURN_IF_ERROR(CheckNice(u.nice, caller, "Nice"));
  if (u.set_comment) TESSERA_RETURN_IF_ERROR(CheckNoControlChars("Comment", u.comment));
  return CheckTimeLimit("TimeLimit", u.time_limit_s);
}

Status CheckDependencyTargets(const std::string& dependency,
                              const std::function<bool(uint64_t)>& known) {
  if (dependency.empty()) return Status::Ok();
  auto dep = sched::ParseDependency(dependency);
  if (!dep.ok()) return Status::Ok();
  for (const auto& item : dep->items) {
    if (item.type == sched::DepType::kSingleton || known(item.job_id)) continue;
    return InvalidArgument("Job dependency problem: job " + std::to_string(item.job_id) + " (" +
                           DepTypeName(item.type) +
                           ") is not known to the controller (never submitted, or ended and "
                           "purged after MinJobAge)");
  }
  return Status::Ok();
}

}  // namespace tessera::ctld
