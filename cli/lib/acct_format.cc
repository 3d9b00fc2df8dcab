#include "cli/lib/acct_format.h"

#include <algorithm>
#include <cstdlib>

#include "cli/lib/job_view.h"
#include "cli/lib/text_util.h"
#include "common/control_chars.h"
#include "common/duration.h"

namespace tessera::cli {
namespace {

struct FieldDef {
  const char* name;
  int width;
};

constexpr FieldDef kFields[] = {
    {"Account", 10},      {"AllocCPUS", 10},  {"AllocNodes", 10}, {"AllocTRES", 10},
    {"Comment", 15},      {"Constraints", 19}, {"DerivedExitCode", 15}, {"Elapsed", 10},
    {"ElapsedRaw", 10},   {"Eligible", 19},   {"End", 19},        {"ExitCode", 8},
    {"GID", 6},           {"Group", 9},       {"JobID", -12},     {"JobIDRaw", -12},
    {"JobName", 10},      {"MaxRSS", 10},     {"MaxVMSize", 10},  {"NCPUS", 10},
    {"NNodes", 8},        {"NodeList", 15},   {"NTasks", 8},      {"Partition", 10},
    {"Priority", 10},     {"QOS", 10},        {"Reason", 20},     {"ReqCPUS", 8},
    {"ReqMem", 10},       {"ReqNodes", 8},    {"ReqTRES", 10},    {"Reservation", 20},
    {"Start", 19},        {"State", 10},      {"Submit", 19},     {"SubmitLine", 20},
    {"Suspended", 10},    {"SystemCPU", 10},  {"Timelimit", 10},  {"TimelimitRaw", 12},
    {"TotalCPU", 10},     {"UID", 6},         {"User", 9},        {"UserCPU", 10},
    {"WorkDir", 20},
    // Issue 19 (sacct -l): usage fields Tessera does not gather yet, printed empty, with
    // sacct's widths.
    {"AveCPU", 10},       {"AveCPUFreq", 10}, {"AveDiskRead", 14}, {"AveDiskWrite", 14},
    {"AvePages", 10},     {"AveRSS", 10},     {"AveVMSize", 10},   {"ConsumedEnergy", 14},
    {"MaxDiskRead", 12},  {"MaxDiskReadNode", 15}, {"MaxDiskReadTask", 15},
    {"MaxDiskWrite", 12}, {"MaxDiskWriteNode", 16}, {"MaxDiskWriteTask", 16},
    {"MaxPages", 8},      {"MaxPagesNode", 12}, {"MaxPagesTask", 14}, {"MaxRSSNode", 10},
    {"MaxRSSTask", 10},   {"MaxVMSizeNode", 14}, {"MaxVMSizeTask", 14}, {"MinCPU", 10},
    {"MinCPUNode", 10},   {"MinCPUTask", 10}, {"ReqCPUFreqMin", 13}, {"ReqCPUFreqMax", 13},
    {"ReqCPUFreqGov", 13}, {"TRESUsageInAve", 14}, {"TRESUsageInMax", 14},
    {"TRESUsageInMaxNode", 18}, {"TRESUsageInMaxTask", 18}, {"TRESUsageInMin", 14},
    {"TRESUsageInMinNode", 18}, {"TRESUsageInMinTask", 18}, {"TRESUsageInTot", 14},
    {"TRESUsageOutMax", 15}, {"TRESUsageOutMaxNode", 19}, {"TRESUsageOutMaxTask", 19},
    {"TRESUsageOutAve", 15}, {"TRESUsageOutTot", 15},
};

std::string Date(int64_t t) { return FormatTimestamp(t, /*unknown_word=*/true); }

// Fields Tessera does not record (no job step accounting yet): printed empty, as sacct does
// when a value is unknown.
bool UnknownField(const std::string& f) {
  return f == "MaxRSS" || f == "MaxVMSize" || f == "SystemCPU" || f == "UserCPU" ||
         f == "TotalCPU" || f.rfind("Ave", 0) == 0 || f.rfind("Max", 0) == 0 ||
         f.rfind("Min", 0) == 0 || f.rfind("TRESUsage", 0) == 0 ||
         f.rfind("ReqCPUFreq", 0) == 0 || f == "ConsumedEnergy";
}

std::string MoreValue(const std::string& field, const pb::JobInfo& job, const IdNames& names) {
  const auto& spec = job.spec();
  if (field == "AllocNodes" || field == "NNodes")
    return job.start_time() > 0 || field == "NNodes" ? std::to_string(NodeCount(job)) : "0";
  if (field == "Comment") return spec.comment();
  if (field == "Constraints") return spec.constraint();
  if (field == "DerivedExitCode") return "0:0";
  if (field == "Eligible") return Date(std::max(job.submit_time(), spec.begin_time()));
  if (field == "GID") return std::to_string(job.gid());
  if (field == "Group") return GroupLabel(names, job.gid());
  if (field == "JobIDRaw") {  // a step row's raw id is "<job id>.<step>" (issue 19)
    const std::string& text = job.array_task_str();
    size_t dot = text.find('.');
    bool step_row = job.array_job_id() == 0 && dot != std::string::npos;
    return std::to_string(job.job_id()) + (step_row ? text.substr(dot) : "");
  }
  if (field == "NCPUS" || field == "ReqCPUS") return std::to_string(CpuCount(job));
  if (field == "NTasks") return std::to_string(TaskCount(job));
  if (field == "Priority") return std::to_string(job.priority());
  if (field == "QOS") return spec.qos();
  if (field == "Reason") return job.reason().empty() ? "None" : job.reason();
  if (field == "ReqMem") {
    uint64_t mem = 0;
    for (const auto& g : spec.task_groups())
      mem += g.per_node().mem_mib() ? g.per_node().mem_mib() : g.per_task().mem_mib() * g.count();
    return mem ? FormatMemMiB(mem) : "0";
  }
  if (field == "ReqNodes") return std::to_string(std::max<uint32_t>(1, spec.nodes_min()));
  if (field == "ReqTRES") return TresOf(job);
  if (field == "Reservation") return spec.reservation();
  if (field == "SubmitLine") return CommandOf(job);
  if (field == "TimelimitRaw") {
    int64_t l = TimeLimitOf(job);
    return l < 0 ? "UNLIMITED" : l == 0 ? "Partition_Limit" : std::to_string(l / 60);
  }
  return "";
}


std::string Value(const std::string& field, const pb::JobInfo& job, const IdNames& names,
                  int64_t now) {
  bool started = job.start_time() > 0;
  if (field == "Account") return AccountOf(job);
  if (field == "AllocCPUS") return started ? std::to_string(CpuCount(job)) : "0";
  if (field == "AllocTRES") return started ? TresOf(job) : "";
  if (field == "Elapsed") return SacctSecs(ElapsedSeconds(job, now));
  if (field == "Suspended") {  // issue 16 §4: this run's suspended time, the open one included
    int64_t sus = job.suspended_s();
    if (job.suspend_time() > 0 && job.state() == pb::SUSPENDED)
      sus += std::max<int64_t>(0, now - job.suspend_time());
    return SacctSecs(sus);
  }
  if (field == "ElapsedRaw") return std::to_string(ElapsedSeconds(job, now));
  if (field == "End") return Date(job.end_time());
  bool step_row = job.array_job_id() == 0 && !job.array_task_str().empty();
  if (field == "ExitCode") {
    // A cancelled job's own row is 0:0 in Slurm (the signal shows on its .batch step).
    if (!step_row && StateOf(job) == JobState::kCancelled) return "0:0";
    return std::to_string(job.exit_code()) + ":" + std::to_string(job.exit_signal());
  }
  if (field == "JobID") {
    // Step rows (WithSteps) carry their "job.step" id in array_task_str with array_job_id 0.
    if (job.array_job_id() == 0 && !job.array_task_str().empty()) return job.array_task_str();
    return JobIdText(job);
  }
  if (field == "JobName") return job.spec().name();
  if (field == "NodeList") return job.nodelist().empty() ? "None assigned" : job.nodelist();
  if (field == "Partition") return PartitionOf(job);
  if (field == "Start") return Date(job.start_time());
  if (field == "State") {
    if (!step_row && StateOf(job) == JobState::kCancelled && !job.cancelled_by_uid().empty())
      return "CANCELLED by " + job.cancelled_by_uid();  // sacct's text (issue 19)
    return JobStateName(StateOf(job));
  }
  if (field == "Submit") return Date(job.submit_time());
  if (field == "Timelimit") {
    int64_t l = TimeLimitOf(job);
    return l < 0 ? "UNLIMITED" : l == 0 ? "Partition_Limit" : SacctSecs(l);
  }
  if (field == "UID") return std::to_string(job.uid());
  if (field == "User") return job.user().empty() ? UserLabel(names, job.uid()) : job.user();
  if (field == "WorkDir") return job.spec().workdir();
  if (UnknownField(field)) return "";
  return MoreValue(field, job, names);
}

// sacct's print_fields_str in column mode.
std::string Cell(const std::string& value, int width) {
  size_t w = static_cast<size_t>(std::abs(width));
  std::string v = value;
  if (v.size() > w) {
    v.resize(w);
    v[w - 1] = '+';
  }
  return PadField(v, static_cast<int>(w), width > 0, true) + " ";
}

std::string Row(const std::vector<std::string>& values, const std::vector<AcctColumn>& cols,
                AcctLayout layout) {
  std::string line;
  for (size_t i = 0; i < values.size(); ++i) {
    if (layout == AcctLayout::kColumns) {
      line += Cell(values[i], cols[i].width);
    } else if (layout == AcctLayout::kParsable2 && i + 1 == values.size()) {
      line += values[i];
    } else {
      line += values[i] + "|";
    }
  }
  return line + "\n";
}

}  // namespace

Result<std::vector<AcctColumn>> ParseAcctFields(std::string_view spec) {
  std::vector<AcctColumn> out;
  for (const std::string& raw : Split(spec, ',')) {
    std::string item = Trim(raw);
    if (item.empty()) continue;
    std::string name = item, width;
    size_t pct = item.find('%');
    if (pct != std::string::npos) {
      name = item.substr(0, pct);
      width = item.substr(pct + 1);
    }
    const FieldDef* def = nullptr;
    for (const auto& f : kFields)
      if (EqualsIgnoreCase(f.name, name)) def = &f;
    if (!def) {
      std::string valid;
      for (const auto& f : kFields) valid += std::string(valid.empty() ? "" : " ") + f.name;
      return InvalidArgument("invalid field \"" + name + "\" in --format; valid fields: " + valid);
    }
    AcctColumn col{def->name, def->width};
    if (!width.empty()) {
      auto n = ParseUint(width, "width");
      if (!n.ok() || *n == 0 || *n > 1000)
        return InvalidArgument("invalid width \"" + width + "\" for field " + def->name);
      col.width = def->width < 0 ? -static_cast<int>(*n) : static_cast<int>(*n);
    }
    out.push_back(col);
  }
  if (out.empty()) return InvalidArgument("empty --format");
  return out;
}

// The batch script's step, "42.batch" (issue 19): on the first node, one task, the job's end.
pb::JobInfo BatchRow(const pb::JobInfo& job) {
  pb::JobInfo row = job;
  row.set_array_job_id(0);
  row.set_array_task_str(JobIdText(job) + ".batch");
  row.mutable_spec()->set_name("batch");
  row.clear_partition();
  row.mutable_spec()->clear_partition();
  JobState st = StateOf(job);
  if (st == JobState::kCompleting || st == JobState::kSuspended) st = JobState::kRunning;
  if (st == JobState::kTimeout || st == JobState::kPreempted) st = JobState::kCancelled;
  row.set_state(static_cast<pb::JobState>(st));
  std::string node = job.alloc_size() ? job.alloc(0).node() : "";
  uint32_t cpus = job.alloc_size() ? job.alloc(0).cpus() : CpuCount(job);
  row.set_nodelist(node);
  row.set_num_tasks(1);
  row.set_num_cpus(cpus);
  row.clear_alloc();
  if (job.alloc_size()) *row.add_alloc() = job.alloc(0);
  return row;
}

std::vector<pb::JobInfo> WithSteps(const std::vector<pb::JobInfo>& jobs,
                                   const std::vector<pb::StepInfo>& steps) {
  std::vector<pb::JobInfo> out;
  for (const auto& job : jobs) {
    out.push_back(job);
    if (job.start_time() > 0 && StateOf(job) != JobState::kPending) out.push_back(BatchRow(job));
    for (const auto& s : steps) {
      if (s.job_id() != job.job_id()) continue;
      // A requeued job (tacct -D rows, issue 16 §4): each run row gets the steps of its run.
      if (job.requeue_count() > 0 && s.start_time() > 0 &&
          (s.start_time() < job.start_time() || (job.end_time() > 0 && s.start_time() > job.end_time())))
        continue;
      pb::JobInfo row = job;
      row.set_array_job_id(0);
      row.set_array_task_str(JobIdText(job) + "." + std::to_string(s.step_id()));
      row.clear_partition();  // sacct prints steps without a partition
      row.mutable_spec()->clear_partition();
      row.mutable_spec()->set_name(s.name());
      row.set_state(s.state());
      row.set_exit_code(s.exit_code());
      row.set_exit_signal(s.exit_signal());
      row.set_start_time(s.start_time());
      row.set_end_time(s.end_time());
      row.set_nodelist(s.nodelist());
      row.set_num_tasks(s.ntasks());
      row.set_num_cpus(s.ncpus());
      row.clear_alloc();
      out.push_back(std::move(row));
    }
  }
  return out;
}

std::string FormatAcct(const std::vector<pb::JobInfo>& jobs, const std::vector<AcctColumn>& cols,
                       AcctLayout layout, bool header, const IdNames& names, int64_t now) {
  std::string out;
  if (header) {
    std::vector<std::string> titles;
    for (const auto& c : cols) titles.push_back(c.name);
    if (layout == AcctLayout::kColumns) {
      for (const auto& c : cols)
        out += PadField(c.name, std::abs(c.width), c.width > 0, true) + " ";
      out += "\n";
      for (const auto& c : cols) out += std::string(std::abs(c.width), '-') + " ";
      out += "\n";
    } else {
      out += Row(titles, cols, layout);
    }
  }
  for (const auto& job : jobs) {
    std::vector<std::string> values;
    for (const auto& c : cols) values.push_back(EscapeControlChars(Value(c.name, job, names, now)));
    out += Row(values, cols, layout);
  }
  return out;
}

}  // namespace tessera::cli
