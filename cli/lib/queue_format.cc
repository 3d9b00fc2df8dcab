#include "cli/lib/queue_format.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "cli/lib/job_view.h"
#include "cli/lib/text_util.h"
#include "common/duration.h"

namespace tessera::cli {
namespace {

constexpr char kKnownCodes[] = "iAjuUgGtTMlLDCPRrNVSeaqbQZokEfy";

struct Cell {
  std::string text;
  bool cut = true;
};

std::string ReasonOf(const pb::JobInfo& job) {
  return job.reason().empty() ? "None" : job.reason();
}

std::string OrNull(const std::string& s) { return s.empty() ? "(null)" : s; }

std::string LimitText(const pb::JobInfo& job) {
  int64_t limit = TimeLimitOf(job);
  if (limit < 0) return "UNLIMITED";
  if (limit == 0) return "NOT_SET";
  return SqueueSecs(limit);
}

std::string TimeLeftText(const pb::JobInfo& job, int64_t now) {
  int64_t limit = TimeLimitOf(job);
  if (limit < 0) return "UNLIMITED";
  if (limit == 0) return "NOT_SET";
  return SqueueSecs(limit - ElapsedSeconds(job, now));
}

// %R: "(Reason)" for pending/failed/timed-out jobs, the node list otherwise.
Cell ReasonList(const pb::JobInfo& job) {
  JobState s = StateOf(job);
  if (s == JobState::kPending || s == JobState::kTimeout || s == JobState::kFailed)
    return {"(" + ReasonOf(job) + ")", true};
  return {job.nodelist(), false};
}

std::string EndText(const pb::JobInfo& job) {
  if (StateOf(job) == JobState::kRunning && TimeLimitOf(job) < 0 && job.end_time() == 0)
    return "NONE";
  return FormatTimestamp(EndTimeOf(job));
}

Cell JobCell(char code, const pb::JobInfo& job, const IdNames& names, int64_t now) {
  const auto& spec = job.spec();
  switch (code) {
    case 'i': case 'A': return {std::to_string(job.job_id())};
    case 'j': return {spec.name()};
    case 'u': return {job.user().empty() ? UserLabel(names, job.uid()) : job.user()};
    case 'U': return {std::to_string(job.uid())};
    case 'g': return {GroupLabel(names, job.gid())};
    case 'G': return {std::to_string(job.gid())};
    case 't': return {JobStateCode(StateOf(job))};
    case 'T': return {JobStateName(StateOf(job))};
    case 'M': return {SqueueSecs(ElapsedSeconds(job, now)), false};
    case 'l': return {LimitText(job), false};
    case 'L': return {TimeLeftText(job, now), false};
    case 'D': return {std::to_string(NodeCount(job))};
    case 'C': return {std::to_string(CpuCount(job))};
    case 'P': return {PartitionOf(job)};
    case 'R': return ReasonList(job);
    case 'r': return {ReasonOf(job)};
    case 'N': return {job.nodelist(), false};
    case 'V': return {FormatTimestamp(job.submit_time())};
    case 'S': return {FormatTimestamp(job.start_time())};
    case 'e': return {EndText(job)};
    case 'a': return {OrNull(AccountOf(job))};
    case 'q': return {OrNull(spec.qos())};
    case 'b': {
      std::string g = GresOf(job);
      return {g.empty() ? "N/A" : g};
    }
    case 'Q': return {std::to_string(job.priority())};
    case 'Z': return {spec.workdir()};
    case 'o': return {CommandOf(job)};
    case 'k': return {OrNull(spec.comment())};
    case 'E': return {OrNull(spec.dependency())};
    case 'f': return {OrNull(spec.constraint())};
    case 'y': return {std::to_string(spec.nice())};
    default: return {"?"};
  }
}

Cell HeaderCell(char code) {
  switch (code) {
    case 'i': case 'A': return {"JOBID"};
    case 'j': return {"NAME"};
    case 'u': case 'U': return {"USER"};
    case 'g': case 'G': return {"GROUP"};
    case 't': return {"ST"};
    case 'T': return {"STATE"};
    case 'M': return {"TIME"};
    case 'l': return {"TIME_LIMIT"};
    case 'L': return {"TIME_LEFT"};
    case 'D': return {"NODES"};
    case 'C': return {"CPUS"};
    case 'P': return {"PARTITION"};
    case 'R': return {"NODELIST(REASON)", false};
    case 'r': return {"REASON"};
    case 'N': return {"NODELIST", false};
    case 'V': return {"SUBMIT_TIME"};
    case 'S': return {"START_TIME"};
    case 'e': return {"END_TIME"};
    case 'a': return {"ACCOUNT"};
    case 'q': return {"QOS"};
    case 'b': return {"TRES_PER_NODE"};
    case 'Q': return {"PRIORITY"};
    case 'Z': return {"WORK_DIR"};
    case 'o': return {"COMMAND"};
    case 'k': return {"COMMENT"};
    case 'E': return {"DEPENDENCY"};
    case 'f': return {"FEATURES"};
    case 'y': return {"NICE"};
    default: return {"?"};
  }
}

template <typename CellFn>
std::string FormatLine(const QueueFormat& fmt, CellFn cell) {
  std::string line = fmt.prefix;
  for (const auto& f : fmt.fields) {
    Cell c = cell(f.code);
    line += PadField(c.text, f.width, f.right, c.cut);
    line += f.suffix;
  }
  return line + "\n";
}

int StateRank(JobState s) {
  // Slurm's base state order: PENDING < RUNNING < SUSPENDED < (COMPLETING flag) < finished.
  switch (s) {
    case JobState::kPending: return 0;
    case JobState::kRunning: return 1;
    case JobState::kSuspended: return 2;
    case JobState::kCompleting: return 3;
    default: return 4 + static_cast<int>(s);
  }
}

}  // namespace

Result<QueueFormat> ParseQueueFormat(std::string_view fmt) {
  QueueFormat out;
  std::string* literal = &out.prefix;
  size_t i = 0;
  while (i < fmt.size()) {
    if (fmt[i] != '%') {
      *literal += fmt[i++];
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '%') {
      *literal += '%';
      i += 2;
      continue;
    }
    QueueField f;
    ++i;
    if (i < fmt.size() && fmt[i] == '.') {
      f.right = true;
      ++i;
    }
    while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i])))
      f.width = std::min(f.width * 10 + (fmt[i++] - '0'), 1000);
    if (i >= fmt.size() || !std::strchr(kKnownCodes, fmt[i]))
      return InvalidArgument("invalid format specification \"%" +
                             std::string(fmt.substr(i, 1)) + "\" in \"" + std::string(fmt) +
                             "\"");
    f.code = fmt[i++];
    out.fields.push_back(f);
    literal = &out.fields.back().suffix;
  }
  return out;
}

void SortQueue(std::vector<pb::JobInfo>& jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const pb::JobInfo& a, const pb::JobInfo& b) {
    std::string pa = PartitionOf(a), pb_ = PartitionOf(b);
    if (pa != pb_) return pa < pb_;
    int sa = StateRank(StateOf(a)), sb = StateRank(StateOf(b));
    if (sa != sb) return sa < sb;
    if (a.priority() != b.priority()) return a.priority() > b.priority();
    return a.job_id() < b.job_id();
  });
}

std::string FormatQueue(const std::vector<pb::JobInfo>& jobs, const QueueFormat& fmt,
                        bool header, const IdNames& names, int64_t now) {
  std::string out;
  if (header) out += FormatLine(fmt, [](char c) { return HeaderCell(c); });
  for (const auto& job : jobs)
    out += FormatLine(fmt, [&](char c) { return JobCell(c, job, names, now); });
  return out;
}

}  // namespace tessera::cli
