#include "cli/lib/queue_format.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>

#include "cli/lib/job_view.h"
#include "cli/lib/text_util.h"
#include "common/control_chars.h"
#include "common/duration.h"

namespace tessera::cli {
namespace {

constexpr char kKnownCodes[] = "iAjuUgGtTMlLDCPRrNVSeaqbQZokEfyFKcmvxBpnY";

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

// Actual start, or for a pending job the scheduler's expectation (N/A when unknown).
std::string StartText(const pb::JobInfo& job) {
  if (job.start_time() > 0) return FormatTimestamp(job.start_time());
  return FormatTimestamp(job.expected_start_time());
}

std::string EndText(const pb::JobInfo& job) {
  if (StateOf(job) == JobState::kRunning && TimeLimitOf(job) < 0 && job.end_time() == 0)
    return "NONE";
  return FormatTimestamp(EndTimeOf(job));
}

Cell JobCell(char code, const pb::JobInfo& job, const IdNames& names, int64_t now) {
  const auto& spec = job.spec();
  switch (code) {
    case 'i': return {JobIdText(job)};
    case 'A': return {std::to_string(job.job_id())};
    case 'F':
      return {std::to_string(job.array_job_id() ? job.array_job_id() : job.job_id())};
    case 'K':
      if (job.array_job_id() == 0) return {"N/A"};
      return {job.array_task_str().empty() ? std::to_string(job.array_task_id())
                                            : job.array_task_str()};
    case 'c': {
      uint32_t c = 0;
      for (const auto& g : spec.task_groups()) c = std::max(c, g.per_task().cpus());
      return {std::to_string(c)};
    }
    case 'm': {
      uint64_t m = 0;
      for (const auto& g : spec.task_groups())
        m = std::max(m, g.per_node().mem_mib() ? g.per_node().mem_mib() : g.per_task().mem_mib());
      return {m ? FormatMemMiB(m) : "0"};
    }
    case 'v': return {OrNull(spec.reservation())};
    case 'x': return {spec.exclude()};
    case 'B': return {job.alloc_size() ? job.alloc(0).node() : "n/a"};
    case 'p': return {std::to_string(job.priority() / 4294967295.0).substr(0, 10)};
    case 'n': return {spec.nodelist()};
    case kCodeTasks: return {std::to_string(TaskCount(job))};
    case kCodeTresAlloc: return {job.alloc_size() ? TresOf(job) : ""};
    case kCodeGresAlloc: return {GpuAllocText(job)};
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
    case 'S': return {StartText(job)};
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
    case 'Y': return {OrNull(job.sched_nodes())};  // issue 19: squeue's SCHEDNODES
    default: return {"?"};
  }
}

Cell HeaderCell(char code) {
  switch (code) {
    case 'i': case 'A': return {"JOBID"};
    case 'F': return {"ARRAY_JOB_ID"};
    case 'K': return {"ARRAY_TASK_ID"};
    case 'c': return {"MIN_CPUS"};
    case 'm': return {"MIN_MEMORY"};
    case 'v': return {"RESERVATION"};
    case 'x': return {"EXC_NODES"};
    case 'B': return {"EXEC_HOST"};
    case 'p': return {"PRIORITY"};
    case 'n': return {"REQ_NODES"};
    case kCodeTasks: return {"TASKS"};
    case kCodeTresAlloc: return {"TRES_ALLOC"};
    case kCodeGresAlloc: return {"GRES_ALLOC"};
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
    case 'Y': return {"SCHEDNODES"};
    default: return {"?"};
  }
}

template <typename CellFn>
std::string FormatLine(const QueueFormat& fmt, CellFn cell) {
  std::string line = fmt.prefix;
  for (const auto& f : fmt.fields) {
    Cell c = cell(f.code);
    line += PadField(EscapeControlChars(c.text), f.width, f.right, c.cut);
    line += f.suffix;
  }
  return line + "\n";
}

int StateRank(JobState s) { return QueueStateRank(s); }

}  // namespace

int QueueStateRank(JobState s) {
  // Slurm's base state order: PENDING < RUNNING < SUSPENDED < (COMPLETING flag) < finished.
  switch (s) {
    case JobState::kPending: return 0;
    case JobState::kRunning: return 1;
    case JobState::kSuspended: return 2;
    case JobState::kCompleting: return 3;
    default: return 4 + static_cast<int>(s);
  }
}

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
  // Keys computed once, then the records moved once: comparing and swapping whole protos in
  // the sort dominated tqueue on large queues.
  struct Key {
    std::string partition;
    int state;
    uint32_t priority;
    uint64_t id;
    size_t index;
  };
  std::vector<Key> keys;
  keys.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i)
    keys.push_back({PartitionOf(jobs[i]), StateRank(StateOf(jobs[i])), jobs[i].priority(), jobs[i].job_id(), i});
  std::stable_sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.partition != b.partition) return a.partition < b.partition;
    if (a.state != b.state) return a.state < b.state;
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.id < b.id;
  });
  std::vector<pb::JobInfo> sorted;
  sorted.reserve(jobs.size());
  for (const Key& k : keys) sorted.push_back(std::move(jobs[k.index]));
  jobs.swap(sorted);
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

namespace tessera::cli {
namespace {

// Numeric sort value for the keys whose text does not sort (times, counts); nullopt = text.
std::optional<double> NumericKey(char code, const pb::JobInfo& job, int64_t now) {
  switch (code) {
    case 'i': case 'F':  // array elements in index order under their array job id
      return job.array_job_id() ? job.array_job_id() * 1e7 + job.array_task_id()
                                : job.job_id() * 1e7;
    case 'A': return static_cast<double>(job.job_id());
    case 'K': return job.array_task_id();
    case 'Q': case 'p': return job.priority();
    case 'U': return job.uid();
    case 'G': return job.gid();
    case 'D': return NodeCount(job);
    case 'C': return CpuCount(job);
    case 'M': return static_cast<double>(ElapsedSeconds(job, now));
    case 'l': return static_cast<double>(TimeLimitOf(job));
    case 'L': return static_cast<double>(TimeLimitOf(job) - ElapsedSeconds(job, now));
    case 'V': return static_cast<double>(job.submit_time());
    case 'S': return static_cast<double>(job.start_time() ? job.start_time()
                                                           : job.expected_start_time());
    case 'e': return static_cast<double>(EndTimeOf(job));
    case 'y': return job.spec().nice();
    case 't': case 'T': return StateRank(StateOf(job));
    default: return std::nullopt;
  }
}

}  // namespace

Status SortQueueBy(std::vector<pb::JobInfo>& jobs, std::string_view keys, const IdNames& names,
                   int64_t now) {
  std::vector<std::pair<char, bool>> order;  // code, descending
  for (std::string k : Split(keys, ',')) {
    k = Trim(k);
    bool desc = false;
    if (!k.empty() && (k[0] == '+' || k[0] == '-')) {
      desc = k[0] == '-';
      k = k.substr(1);
    }
    if (k.size() != 1 || !std::strchr(kKnownCodes, k[0]))
      return InvalidArgument("invalid sort key \"" + k + "\" in --sort (use format letters "
                             "such as i, P, t, p, u, -S)");
    order.emplace_back(k[0], desc);
  }
  std::stable_sort(jobs.begin(), jobs.end(), [&](const pb::JobInfo& a, const pb::JobInfo& b) {
    for (auto [code, desc] : order) {
      auto na = NumericKey(code, a, now), nb = NumericKey(code, b, now);
      int cmp = 0;
      if (na && nb) {
        cmp = *na < *nb ? -1 : *na > *nb ? 1 : 0;
      } else {
        std::string ta = JobCell(code, a, names, now).text, tb = JobCell(code, b, names, now).text;
        cmp = ta.compare(tb);
      }
      if (cmp != 0) return desc ? cmp > 0 : cmp < 0;
    }
    return false;
  });
  return Status::Ok();
}

}  // namespace tessera::cli
