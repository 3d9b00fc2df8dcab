#include "cli/lib/acct_format.h"

#include <algorithm>
#include <cstdio>
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

constexpr uint32_t kBatchStepId = 0xfffffffb;  // the controller's .batch step record

// sacct's CPU times: D-HH:MM:SS, HH:MM:SS, MM:SS.mmm with milliseconds, else 00:MM:SS.
std::string CpuTime(uint64_t ms, bool with_ms) {
  uint64_t secs = ms / 1000, sub = with_ms ? ms % 1000 : 0;
  uint64_t d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;
  char buf[64];
  if (d)
    std::snprintf(buf, sizeof buf, "%llu-%02llu:%02llu:%02llu", (unsigned long long)d,
                  (unsigned long long)h, (unsigned long long)m, (unsigned long long)s);
  else if (h)
    std::snprintf(buf, sizeof buf, "%02llu:%02llu:%02llu", (unsigned long long)h,
                  (unsigned long long)m, (unsigned long long)s);
  else if (sub)
    std::snprintf(buf, sizeof buf, "%02llu:%02llu.%03llu", (unsigned long long)m,
                  (unsigned long long)s, (unsigned long long)sub);
  else
    std::snprintf(buf, sizeof buf, "00:%02llu:%02llu", (unsigned long long)m,
                  (unsigned long long)s);
  return buf;
}

// KiB as sacct prints memory: the largest unit that keeps the number exact (1048576 -> 1G).
std::string Kib(uint64_t v) {
  if (v == 0) return "0";
  const char* units = "KMGTP";
  int u = 0;
  while (v >= 1024 && v % 1024 == 0 && u < 4) v /= 1024, ++u;
  return std::to_string(v) + units[u];
}

// Fields Tessera does not record: printed empty, as sacct does when a value is unknown (the
// usage fields it gathers are answered by UsageValue first).
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
                  int64_t now, const pb::StepUsage& usage) {
  if (auto u = UsageValue(field, usage, job.nodelist())) return *u;
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

std::string AcctFieldList() {
  std::string out, line;
  for (const auto& f : kFields) {
    if (line.size() + std::string(f.name).size() + 1 > 80) out += line + "\n", line.clear();
    line += (line.empty() ? "" : " ") + std::string(f.name);
  }
  return out + line + "\n";
}

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
                                   const std::vector<pb::StepInfo>& steps,
                                   std::vector<pb::StepUsage>* usage) {
  std::vector<pb::JobInfo> out;
  std::vector<pb::StepUsage> use;
  for (const auto& job : jobs) {
    // The job's own row: the CPU time of all its steps of this run (issue 19).
    size_t job_row = out.size();
    out.push_back(job);
    use.emplace_back();
    auto this_run = [&](const pb::StepInfo& s) {
      return s.job_id() == job.job_id() &&
             !(job.requeue_count() > 0 && s.start_time() > 0 &&
               (s.start_time() < job.start_time() ||
                (job.end_time() > 0 && s.start_time() > job.end_time())));
    };
    auto add_cpu = [&](const pb::StepUsage& su) {
      use[job_row].set_user_cpu_ms(use[job_row].user_cpu_ms() + su.user_cpu_ms());
      use[job_row].set_system_cpu_ms(use[job_row].system_cpu_ms() + su.system_cpu_ms());
    };
    if (job.start_time() > 0 && StateOf(job) != JobState::kPending) {
      out.push_back(BatchRow(job));
      use.emplace_back();
      for (const auto& s : steps)
        if (s.step_id() == kBatchStepId && this_run(s)) use.back() = s.usage();
      add_cpu(use.back());
    }
    for (const auto& s : steps) {
      if (s.job_id() != job.job_id() || s.step_id() == kBatchStepId) continue;
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
      use.push_back(s.usage());
      add_cpu(s.usage());
    }
  }
  if (usage) *usage = std::move(use);
  return out;
}

namespace {

// Bytes as sacct prints disk figures (convert_num_unit, exact): 4096 -> 4K, 5000 -> 5000.
std::string Bytes(uint64_t v) {
  if (v == 0) return "0";
  const char* units[] = {"", "K", "M", "G", "T", "P"};
  int u = 0;
  while (v >= 1024 && v % 1024 == 0 && u < 5) v /= 1024, ++u;
  return std::to_string(v) + units[u];
}

// h19 s6: MaxDiskRead/Write (+Node/Task), AveDiskRead/Write and the TRESUsageIn*/Out* strings
// (TRES names sorted, as sacct prints them: cpu, fs/disk, mem, pages, vmem; no energy: Tessera
// has no energy plugin). Empty where not gathered.
std::optional<std::string> DiskOrTresValue(const std::string& f, const pb::StepUsage& u,
                                           const std::string& node) {
  static const char* kDisk[] = {"MaxDiskRead", "MaxDiskReadNode", "MaxDiskReadTask", "AveDiskRead",
                                "MaxDiskWrite", "MaxDiskWriteNode", "MaxDiskWriteTask",
                                "AveDiskWrite"};
  bool disk = false;
  for (const char* k : kDisk) disk = disk || f == k;
  bool tres = f.rfind("TRESUsageIn", 0) == 0 || f.rfind("TRESUsageOut", 0) == 0;
  if (!disk && !tres) return std::nullopt;
  if (u.ntasks() == 0) return std::string();
  auto at = [&](const std::string& n) { return n.empty() ? node : n; };
  uint32_t n = u.ntasks();
  bool d = u.disk_measured();
  if (disk && !d) return std::string();
  if (f == "MaxDiskRead") return Bytes(u.max_disk_read_bytes());
  if (f == "MaxDiskReadNode") return at(u.max_disk_read_node());
  if (f == "MaxDiskReadTask") return std::to_string(u.max_disk_read_task());
  if (f == "AveDiskRead") return Bytes(u.sum_disk_read_bytes() / n);
  if (f == "MaxDiskWrite") return Bytes(u.max_disk_write_bytes());
  if (f == "MaxDiskWriteNode") return at(u.max_disk_write_node());
  if (f == "MaxDiskWriteTask") return std::to_string(u.max_disk_write_task());
  if (f == "AveDiskWrite") return Bytes(u.sum_disk_write_bytes() / n);
  auto join = [](std::vector<std::pair<std::string, std::string>> kv) {
    std::string out;
    for (const auto& [k, v] : kv) out += (out.empty() ? "" : ",") + k + "=" + v;
    return out;
  };
  uint64_t cpu = u.user_cpu_ms() + u.system_cpu_ms();
  std::vector<std::pair<std::string, std::string>> kv;
  if (f == "TRESUsageInMax" || f == "TRESUsageInMaxNode" || f == "TRESUsageInMaxTask") {
    int which = f == "TRESUsageInMax" ? 0 : f == "TRESUsageInMaxNode" ? 1 : 2;
    auto pick = [&](const std::string& v, const std::string& nd, uint32_t t) {
      return which == 0 ? v : which == 1 ? at(nd) : std::to_string(t);
    };
    if (d) kv.push_back({"fs/disk", pick(std::to_string(u.max_disk_read_bytes()),
                                         u.max_disk_read_node(), u.max_disk_read_task())});
    kv.push_back({"mem", pick(Kib(u.max_rss_kib()), u.max_rss_node(), u.max_rss_task())});
    kv.push_back({"pages", pick(std::to_string(u.max_pages()), u.max_pages_node(), u.max_pages_task())});
    kv.push_back({"vmem", pick(Kib(u.max_vmsize_kib()), u.max_vmsize_node(), u.max_vmsize_task())});
    return join(kv);
  }
  if (f == "TRESUsageInMin" || f == "TRESUsageInMinNode" || f == "TRESUsageInMinTask") {
    std::string v = f == "TRESUsageInMin" ? CpuTime(u.min_cpu_ms(), false)
                    : f == "TRESUsageInMinNode" ? at(u.min_cpu_node())
                                                : std::to_string(u.min_cpu_task());
    return join({{"cpu", v}});
  }
  if (f == "TRESUsageInTot" || f == "TRESUsageInAve") {
    uint32_t div = f == "TRESUsageInAve" ? n : 1;
    kv.push_back({"cpu", CpuTime(cpu / div, false)});
    if (d) kv.push_back({"fs/disk", std::to_string(u.sum_disk_read_bytes() / div)});
    kv.push_back({"mem", Kib(u.sum_rss_kib() / div)});
    kv.push_back({"pages", std::to_string(u.sum_pages() / div)});
    kv.push_back({"vmem", Kib(u.sum_vmsize_kib() / div)});
    return join(kv);
  }
  if (!d) return std::string();  // the Out strings hold only fs/disk here
  if (f == "TRESUsageOutMax") return join({{"fs/disk", std::to_string(u.max_disk_write_bytes())}});
  if (f == "TRESUsageOutMaxNode") return join({{"fs/disk", at(u.max_disk_write_node())}});
  if (f == "TRESUsageOutMaxTask")
    return join({{"fs/disk", std::to_string(u.max_disk_write_task())}});
  if (f == "TRESUsageOutTot") return join({{"fs/disk", std::to_string(u.sum_disk_write_bytes())}});
  if (f == "TRESUsageOutAve")
    return join({{"fs/disk", std::to_string(u.sum_disk_write_bytes() / n)}});
  return std::string();
}

}  // namespace

std::optional<std::string> UsageValue(const std::string& f, const pb::StepUsage& u,
                                      const std::string& node) {
  if (auto v = DiskOrTresValue(f, u, node)) return v;
  auto at = [&](const std::string& n) { return n.empty() ? node : n; };
  uint64_t cpu = u.user_cpu_ms() + u.system_cpu_ms();
  if (f == "TotalCPU") return CpuTime(cpu, true);
  if (f == "UserCPU") return CpuTime(u.user_cpu_ms(), true);
  if (f == "SystemCPU") return CpuTime(u.system_cpu_ms(), true);
  static const char* kStepOnly[] = {"MaxRSS", "MaxRSSNode", "MaxRSSTask", "AveRSS", "MaxVMSize",
                                    "MaxVMSizeNode", "MaxVMSizeTask", "AveVMSize", "MinCPU",
                                    "MinCPUNode", "MinCPUTask", "AveCPU", "MaxPages",
                                    "MaxPagesNode", "MaxPagesTask", "AvePages"};
  bool known = false;
  for (const char* k : kStepOnly) known = known || f == k;
  if (!known) return std::nullopt;
  if (u.ntasks() == 0) return std::string();  // not gathered (or a job's own row)
  uint32_t n = u.ntasks();
  if (f == "MaxRSS") return Kib(u.max_rss_kib());
  if (f == "MaxRSSNode") return at(u.max_rss_node());
  if (f == "MaxRSSTask") return std::to_string(u.max_rss_task());
  if (f == "AveRSS") return Kib(u.sum_rss_kib() / n);
  if (f == "MaxVMSize") return Kib(u.max_vmsize_kib());
  if (f == "MaxVMSizeNode") return at(u.max_vmsize_node());
  if (f == "MaxVMSizeTask") return std::to_string(u.max_vmsize_task());
  if (f == "AveVMSize") return Kib(u.sum_vmsize_kib() / n);
  if (f == "MinCPU") return CpuTime(u.min_cpu_ms(), false);
  if (f == "MinCPUNode") return at(u.min_cpu_node());
  if (f == "MinCPUTask") return std::to_string(u.min_cpu_task());
  if (f == "AveCPU") return CpuTime(cpu / n, false);
  if (f == "MaxPages") return std::to_string(u.max_pages());
  if (f == "MaxPagesNode") return at(u.max_pages_node());
  if (f == "MaxPagesTask") return std::to_string(u.max_pages_task());
  return std::to_string(u.sum_pages() / n);  // AvePages
}

std::string FormatAcct(const std::vector<pb::JobInfo>& jobs, const std::vector<AcctColumn>& cols,
                       AcctLayout layout, bool header, const IdNames& names, int64_t now,
                       const std::vector<pb::StepUsage>* usage) {
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
  static const pb::StepUsage kNone;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto& job = jobs[i];
    const pb::StepUsage& u = usage && i < usage->size() ? (*usage)[i] : kNone;
    std::vector<std::string> values;
    for (const auto& c : cols)
      values.push_back(EscapeControlChars(Value(c.name, job, names, now, u)));
    out += Row(values, cols, layout);
  }
  return out;
}

}  // namespace tessera::cli
