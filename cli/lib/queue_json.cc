// FormatQueueJson (declared in queue_format.h): tqueue --json.
#include <boost/json.hpp>

#include "cli/lib/job_view.h"
#include "cli/lib/queue_format.h"

namespace tessera::cli {
namespace {

boost::json::object JobObject(const pb::JobInfo& job, const IdNames& names, int64_t now) {
  const auto& spec = job.spec();
  boost::json::object o;
  o["job_id"] = job.job_id();
  o["name"] = spec.name();
  o["user_id"] = job.uid();
  o["user_name"] = job.user().empty() ? UserLabel(names, job.uid()) : job.user();
  o["group_id"] = job.gid();
  o["partition"] = PartitionOf(job);
  o["account"] = AccountOf(job);
  o["qos"] = spec.qos();
  o["job_state"] = JobStateName(StateOf(job));
  o["state_reason"] = job.reason().empty() ? "None" : job.reason();
  o["priority"] = job.priority();
  o["nodes"] = job.nodelist();
  o["node_count"] = NodeCount(job);
  o["cpus"] = CpuCount(job);
  o["tasks"] = TaskCount(job);
  o["tres_per_node"] = GresOf(job);
  o["time_limit_s"] = TimeLimitOf(job);  // -1 unlimited, 0 not set
  o["elapsed_s"] = ElapsedSeconds(job, now);
  o["submit_time"] = job.submit_time();
  o["start_time"] = job.start_time();
  o["end_time"] = EndTimeOf(job);
  o["exit_code"] = job.exit_code();
  o["exit_signal"] = job.exit_signal();
  o["requeue_count"] = job.requeue_count();
  o["current_working_directory"] = spec.workdir();
  o["command"] = CommandOf(job);
  o["standard_output"] = job.stdout_path();
  o["standard_error"] = job.stderr_path();
  o["comment"] = spec.comment();
  o["dependency"] = spec.dependency();
  return o;
}

}  // namespace

std::string FormatQueueJson(const std::vector<pb::JobInfo>& jobs, const IdNames& names,
                            int64_t now) {
  boost::json::array arr;
  for (const auto& job : jobs) arr.push_back(JobObject(job, names, now));
  boost::json::object root;
  root["jobs"] = std::move(arr);
  return boost::json::serialize(root) + "\n";
}

}  // namespace tessera::cli
