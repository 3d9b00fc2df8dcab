#pragma once
// tqueue's fast path (issue #6): the queue from ListJobs' columnar JobSummaries (requested with
// ListJobsRequest.summary) printed straight into one buffer, without building a JobInfo per job.
//
// Used only when every field of the format is a summary field (SummaryCovers); the output is
// byte for byte what FormatQueue prints for the same jobs in SortQueue's order (the unit tests
// compare both on the same jobs). Other formats, --json, -S, -r, -q and -w take the JobInfo path.
#include <cstdint>
#include <iosfwd>
#include <set>
#include <string>
#include <vector>

#include "cli/lib/id_names.h"
#include "cli/lib/queue_format.h"
#include "tessera/v1/controller.pb.h"

namespace tessera::cli {

// Field codes a JobSummaries row can print: i A F K j u U t T M l L D C P R r N V S e a Q p.
bool SummaryCovers(const QueueFormat& fmt);

// The client-side re-check of the request's filters (the server applies them too) plus -n.
struct SummaryFilter {
  std::vector<uint64_t> job_ids;
  std::vector<uint32_t> uids;
  std::vector<int> states;
  std::vector<std::string> partitions, accounts;
  std::set<std::string> names;
};

// Rows that pass `filter`, in squeue's default order (partition, state, priority high first,
// job id; stable otherwise), appended to `out` as FormatQueue lays them out (header first when
// `header`). Malformed input (columns of different lengths, string indices out of range)
// yields kInvalidArgument naming the column.
Status FormatSummaryQueue(const tessera::v1::JobSummaries& s, const SummaryFilter& filter,
                          const QueueFormat& fmt, bool header, const IdNames& names, int64_t now,
                          std::string* out);
// The same, written to `os` in chunks of ~64 KiB. On a malformed summary nothing is written.
Status PrintSummaryQueue(const tessera::v1::JobSummaries& s, const SummaryFilter& filter,
                         const QueueFormat& fmt, bool header, const IdNames& names, int64_t now,
                         std::ostream& os);

}  // namespace tessera::cli
