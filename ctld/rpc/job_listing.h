#pragma once
// ListJobs' selection and its two answer shapes: full JobInfo messages, or the compact columnar
// JobSummaries (ListJobsRequest.summary, issue #6) that tqueue asks for when its format prints
// only summary fields.
//
// Selection (core thread): durable jobs matching every filter of the request, in job id order;
// finished jobs only with include_finished or a states filter. With job_ids the jobs are looked
// up by id (plus the elements of an array named by its id, whose ids follow the array's id), so
// a one-job query does not walk the queue. Pending elements of an array that never started are
// collapsed into one row (the array's id, array_task_str = remaining indices) unless
// expand_arrays is set.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ctld/jobs/job_manager.h"
#include "tessera/v1/controller.pb.h"

namespace tessera::ctld::rpc {

struct ListedJob {
  const JobRecord* job = nullptr;
  uint64_t shown_id = 0;       // job id to show (the array's id for a collapsed array)
  std::string array_task_str;  // collapsed array: remaining indices ("3-15%4"), else ""
};

std::vector<ListedJob> SelectJobs(const JobManager& jobs, const v1::ListJobsRequest& req);

// Appends rows to a JobSummaries message, interning strings.
class SummaryBuilder {
 public:
  explicit SummaryBuilder(v1::JobSummaries* out, size_t expected_rows);
  void Add(const ListedJob& row);
  // Row `row` becomes a collapsed pending array: shown as `array_id`, remaining indices `rest`.
  void Collapse(size_t row, uint64_t array_id, const std::string& rest);

 private:
  uint32_t Intern(const std::string& s);

  v1::JobSummaries* out_;
  std::unordered_map<std::string_view, uint32_t> index_;  // views into out_->strings()
  std::vector<std::pair<const std::string*, uint32_t>> last_;  // per column: last string seen
};

// Fills `resp` for `req`: summary columns when req.summary(), JobInfo messages otherwise.
void FillListJobs(const JobManager& jobs, const v1::ListJobsRequest& req,
                  v1::ListJobsResponse* resp);

}  // namespace tessera::ctld::rpc
