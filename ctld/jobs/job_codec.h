#pragma once
// JSON encoding of JobRecord (the `jobs.record` column) and of event details.
#include <string>

#include "common/status.h"
#include "ctld/jobs/job.h"

namespace tessera::ctld {

std::string EncodeRecord(const JobRecord& r);
Result<JobRecord> DecodeRecord(const std::string& json);

Result<std::map<std::string, std::string>> DecodeEnv(const std::string& json);

// Apply: the pure transition function of event sourcing. Returns the record after `e`.
// Unknown event types and malformed details are errors (the record is returned unchanged).
Result<JobRecord> Apply(const JobRecord& r, const JobEvent& e);

// Builders for event details, so producers and Apply agree on field names.
std::string StartedDetail(const std::vector<NodeAlloc>& alloc, int64_t start_time);
std::string FinishedDetail(JobState state, int32_t exit_code, int32_t exit_signal,
                           int64_t end_time, const std::string& message);
std::string RequeuedDetail(const std::string& reason);
// A node's report of a run that is not the job's current one (event::kStaleReport).
std::string StaleReportDetail(const std::string& node, uint64_t run, JobState state,
                              int32_t exit_code, int32_t exit_signal, const std::string& message);
struct JobUpdate {
  int64_t time_limit_s = 0;   // 0 = unchanged
  int64_t priority = -1;      // -1 = unchanged
  bool set_nice = false;
  int32_t nice = 0;
  bool set_comment = false;
  std::string comment;
  std::string partition;      // "" = unchanged (pending jobs only; validated by the controller)
  uint32_t num_nodes = 0;     // 0 = unchanged (pending jobs only)
};
std::string UpdatedDetail(const JobUpdate& u);

}  // namespace tessera::ctld
