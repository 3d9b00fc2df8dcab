#include "cli/lib/acct_format.h"

#include <cstdlib>

#include "cli/lib/job_view.h"
#include "cli/lib/text_util.h"
#include "common/duration.h"

namespace tessera::cli {
namespace {

struct FieldDef {
  const char* name;
  int width;
};

constexpr FieldDef kFields[] = {
    {"Account", 10},   {"AllocCPUS", 10}, {"AllocTRES", 10}, {"Elapsed", 10},
    {"End", 19},       {"ExitCode", 8},   {"JobID", -12},    {"JobName", 10},
    {"NodeList", 15},  {"Partition", 10}, {"Start", 19},     {"State", 10},
    {"Submit", 19},    {"Timelimit", 10}, {"UID", 6},        {"User", 9},
    {"WorkDir", 20},
};

std::string Date(int64_t t) { return FormatTimestamp(t, /*unknown_word=*/true); }

std::string Value(const std::string& field, const pb::JobInfo& job, const IdNames& names,
                  int64_t now) {
  bool started = job.start_time() > 0;
  if (field == "Account") return AccountOf(job);
  if (field == "AllocCPUS") return started ? std::to_string(CpuCount(job)) : "0";
  if (field == "AllocTRES") return started ? TresOf(job) : "";
  if (field == "Elapsed") return SacctSecs(ElapsedSeconds(job, now));
  if (field == "End") return Date(job.end_time());
  if (field == "ExitCode")
    return std::to_string(job.exit_code()) + ":" + std::to_string(job.exit_signal());
  if (field == "JobID") return std::to_string(job.job_id());
  if (field == "JobName") return job.spec().name();
  if (field == "NodeList") return job.nodelist().empty() ? "None assigned" : job.nodelist();
  if (field == "Partition") return PartitionOf(job);
  if (field == "Start") return Date(job.start_time());
  if (field == "State") return JobStateName(StateOf(job));
  if (field == "Submit") return Date(job.submit_time());
  if (field == "Timelimit") {
    int64_t l = TimeLimitOf(job);
    return l < 0 ? "UNLIMITED" : l == 0 ? "Partition_Limit" : SacctSecs(l);
  }
  if (field == "UID") return std::to_string(job.uid());
  if (field == "User") return job.user().empty() ? UserLabel(names, job.uid()) : job.user();
  if (field == "WorkDir") return job.spec().workdir();
  return "";
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
    for (const auto& c : cols) values.push_back(Value(c.name, job, names, now));
    out += Row(values, cols, layout);
  }
  return out;
}

}  // namespace tessera::cli
