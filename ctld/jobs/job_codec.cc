#include "ctld/jobs/job_codec.h"

#include <boost/json.hpp>
#include <boost/mp11.hpp>

#include <algorithm>
#include <type_traits>

namespace tessera::ctld {
namespace json = boost::json;
namespace {

// Lenient decoding: keys missing from the JSON keep their defaults and unknown keys are ignored,
// so records written by older schema versions still load.
template <typename T>
void Read(const json::value& v, T& out);

template <typename T>
struct IsVector : std::false_type {};
template <typename U>
struct IsVector<std::vector<U>> : std::true_type {};

template <typename T>
void Read(const json::value& v, T& out) {
  if constexpr (boost::describe::has_describe_members<T>::value) {
    const json::object& obj = v.as_object();
    using Members = boost::describe::describe_members<T, boost::describe::mod_public>;
    boost::mp11::mp_for_each<Members>([&](auto d) {
      if (const json::value* m = obj.if_contains(d.name)) Read(*m, out.*d.pointer);
    });
  } else if constexpr (IsVector<T>::value && !std::is_same_v<T, std::string>) {
    out.clear();
    for (const auto& e : v.as_array()) {
      typename T::value_type x{};
      Read(e, x);
      out.push_back(std::move(x));
    }
  } else {
    out = json::value_to<T>(v);
  }
}

template <typename T>
Result<T> DecodeAs(const std::string& text, const char* what) {
  try {
    T out{};
    Read(json::parse(text), out);
    return out;
  } catch (const std::exception& e) {
    return Status(Code::kDataLoss, std::string("cannot decode ") + what + ": " + e.what());
  }
}

}  // namespace

std::string EncodeRecord(const JobRecord& r) {
  // The value tree lives in a stack buffer (it overflows to the heap for big records): made on
  // every job transition, it cost a malloc per member (~10% of ctld's CPU per submission).
  unsigned char buf[16384];
  json::monotonic_resource mr(buf, sizeof buf);
  return json::serialize(json::value_from(r, json::storage_ptr(&mr)));
}

Result<JobRecord> DecodeRecord(const std::string& text) { return DecodeAs<JobRecord>(text, "job record"); }

Result<std::map<std::string, std::string>> DecodeEnv(const std::string& text) {
  return DecodeAs<std::map<std::string, std::string>>(text, "job environment");
}

std::string StartedDetail(const std::vector<NodeAlloc>& alloc, int64_t start_time) {
  json::object o;
  o["alloc"] = json::value_from(alloc);
  o["start_time"] = start_time;
  return json::serialize(o);
}

std::string FinishedDetail(JobState state, int32_t exit_code, int32_t exit_signal,
                           int64_t end_time, const std::string& message) {
  json::object o;
  o["state"] = static_cast<int>(state);
  o["exit_code"] = exit_code;
  o["exit_signal"] = exit_signal;
  o["end_time"] = end_time;
  o["message"] = message;
  return json::serialize(o);
}

std::string RequeuedDetail(const std::string& reason) {
  json::object o;
  o["reason"] = reason;
  return json::serialize(o);
}

std::string StaleReportDetail(const std::string& node, uint64_t run, JobState state,
                              int32_t exit_code, int32_t exit_signal, const std::string& message) {
  json::object o;
  o["node"] = node;
  o["run"] = run;
  o["state"] = static_cast<int>(state);
  o["exit_code"] = exit_code;
  o["exit_signal"] = exit_signal;
  o["message"] = message;
  return json::serialize(o);
}

std::string UpdatedDetail(const JobUpdate& u) {
  json::object o;
  if (u.time_limit_s != 0) o["time_limit_s"] = u.time_limit_s;
  if (u.priority >= 0) o["priority"] = u.priority;
  if (u.set_nice) o["nice"] = u.nice;
  if (u.set_comment) o["comment"] = u.comment;
  if (!u.partition.empty()) o["partition"] = u.partition;
  if (u.num_nodes) o["num_nodes"] = u.num_nodes;
  return json::serialize(o);
}

// slurmctld's state_reason for a job that ended (job_mgr.c, job_completion_logger's callers):
// FAILED with an exit code FAIL_EXIT_CODE, by a signal FAIL_LAUNCH; TIMEOUT, OOM, NODE_FAIL.
static std::string EndReason(const JobRecord& r) {
  switch (r.State()) {
    case JobState::kFailed: return r.exit_code != 0 ? "NonZeroExitCode" : "JobLaunchFailure";
    case JobState::kTimeout: return "TimeLimit";
    case JobState::kOutOfMemory: return "OutOfMemory";
    case JobState::kNodeFail: return "NodeDown";
    default: return "None";
  }
}

Result<JobRecord> Apply(const JobRecord& in, const JobEvent& e) {
  try {
    JobRecord r = in;
    json::object d = e.detail.empty() ? json::object() : json::parse(e.detail).as_object();
    if (e.type == event::kSubmitted) {
      Read(json::value(d), r);
    } else if (e.type == event::kHeld) {
      r.held = true;
      r.reason = "JobHeldUser";
    } else if (e.type == event::kReleased) {
      r.held = false;
      r.reason = "Priority";
    } else if (e.type == event::kStarted) {
      Read(d.at("alloc"), r.alloc);
      r.start_time = d.at("start_time").to_number<int64_t>();
      r.run = std::max<uint64_t>(r.run, r.requeue_count) + 1;
      r.state = static_cast<int>(JobState::kRunning);
      r.reason = "None";
      r.suspended_s = r.suspend_time = r.preempt_kill_at = 0;
    } else if (e.type == event::kCancelRequested) {
      r.cancel_requested = true;
      // Issue 19: the canceller is kept as the job's message (persisted with the record) until
      // the end, so accounting shows "CANCELLED by <uid>" as sacct does.
      if (auto* uid = d.if_contains("uid"))
        r.message = "cancelled by uid " + std::to_string(uid->to_number<uint32_t>());
    } else if (e.type == event::kRequeueRequested) {
      r.requeue_requested = true;
    } else if (e.type == event::kFinished) {
      r.state = d.at("state").to_number<int>();
      r.exit_code = d.at("exit_code").to_number<int32_t>();
      r.exit_signal = d.at("exit_signal").to_number<int32_t>();
      r.end_time = d.at("end_time").to_number<int64_t>();
      std::string message = json::value_to<std::string>(d.at("message"));
      bool keep_canceller = message.empty() && r.State() == JobState::kCancelled &&
                            r.message.str().rfind("cancelled by uid ", 0) == 0;
      if (!keep_canceller) r.message = message;
      // A job that failed for a stated cause (its output file could not be opened, its working
      // directory was missing, ...) shows that cause as its reason, as Slurm shows state_desc.
      // Otherwise the cause slurmctld names (issue 19): NonZeroExitCode, TimeLimit, ...
      r.reason = r.State() == JobState::kFailed && !r.message.empty() ? r.message.str()
                                                                      : EndReason(r);
      if (r.suspend_time > 0) {  // ended while suspended (cancelled): that time counts too
        r.suspended_s += std::max<int64_t>(0, r.end_time - r.suspend_time);
        r.suspend_time = 0;
      }
    } else if (e.type == event::kRequeued) {
      r.state = static_cast<int>(JobState::kPending);
      r.requeue_count += 1;
      r.alloc.clear();
      r.start_time = 0;
      r.end_time = 0;
      r.cancel_requested = false;
      r.requeue_requested = false;
      r.preempt_kill_at = r.suspend_time = 0;
      r.reason = json::value_to<std::string>(d.at("reason"));
      r.eligible_time = e.time;
    } else if (e.type == event::kUpdated) {
      if (auto* v = d.if_contains("time_limit_s")) r.time_limit_s = v->to_number<int64_t>();
      if (auto* v = d.if_contains("priority")) r.priority = v->to_number<int64_t>();
      if (auto* v = d.if_contains("nice")) r.spec.nice = v->to_number<int32_t>();
      if (auto* v = d.if_contains("comment")) r.spec.comment = json::value_to<std::string>(*v);
      if (auto* v = d.if_contains("partition")) {
        r.spec.partition = json::value_to<std::string>(*v);
        r.partition = r.spec.partition.str();
      }
      if (auto* v = d.if_contains("num_nodes")) r.spec.nodes_min = r.spec.nodes_max = v->to_number<uint32_t>();
    } else if (e.type == event::kStepCreated) {
      r.next_step_id = d.at("step_id").to_number<uint32_t>() + 1;
    } else if (e.type == event::kSuspended) {
      r.state = static_cast<int>(JobState::kSuspended);
      r.suspend_time = std::max<int64_t>(1, e.time);
    } else if (e.type == event::kResumed) {
      r.state = static_cast<int>(JobState::kRunning);
      if (r.suspend_time > 0) r.suspended_s += std::max<int64_t>(0, e.time - r.suspend_time);
      r.suspend_time = 0;
    } else if (e.type == event::kPreempted) {
      auto* mode = d.if_contains("mode");
      auto* grace = d.if_contains("grace_time");
      if (mode && mode->is_string() && mode->as_string() != "SUSPEND")
        r.preempt_kill_at = std::max<int64_t>(1, e.time + (grace ? grace->to_number<int64_t>() : 0));
    } else if (e.type == event::kStaleReport || e.type == event::kGpuFailure ||
               e.type == event::kPreempting) {
      // Only recorded (the job's events show it); the record does not change.
    } else if (e.type == event::kReason) {
      r.reason = json::value_to<std::string>(d.at("reason"));
    } else {
      return InvalidArgument("unknown job event type \"" + e.type + "\"");
    }
    return r;
  } catch (const std::exception& ex) {
    return InvalidArgument("malformed " + e.type + " event for job " + std::to_string(e.job_id) +
                           ": " + ex.what());
  }
}

}  // namespace tessera::ctld
