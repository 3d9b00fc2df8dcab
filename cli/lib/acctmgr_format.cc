#include "cli/lib/acctmgr_format.h"

#include <strings.h>

#include <algorithm>
#include <cstdlib>

namespace tessera::cli {
namespace {

struct Known {
  const char* name;  // full name as format= takes it
  size_t min_len;    // shortest prefix accepted (sacctmgr's table)
  const char* header;
  int width;
};

// In sacctmgr's order (alphabetical, so the first prefix match is the right one).
const Known kFields[] = {
    {"Account", 3, "Account", 10},          {"Acct", 4, "Account", 10},
    {"AdminLevel", 2, "Admin", 9},          {"Cluster", 2, "Cluster", 10},
    {"DefaultAccount", 8, "Def Acct", 10},  {"DefaultQOS", 8, "Def QOS", 9},
    {"Description", 3, "Descr", 20},        {"FairShare", 2, "Share", 9},
    {"Flags", 2, "Flags", 20},              {"GraceTime", 3, "GraceTime", 10},
    {"GrpJobs", 4, "GrpJobs", 7},           {"GrpSubmitJobs", 4, "GrpSubmit", 9},
    {"GrpTRES", 7, "GrpTRES", 13},          {"GrpTRESMins", 7, "GrpTRESMins", 13},
    {"GrpTRESRunMins", 10, "GrpTRESRunMins", 13}, {"GrpWall", 4, "GrpWall", 11},
    {"Guarantee", 3, "Guarantee", 13},      {"Limit", 3, "Limit", 13},
    {"MaxJobs", 4, "MaxJobs", 7},           {"MaxJobsPA", 9, "MaxJobsPA", 9},
    {"MaxJobsPerUser", 8, "MaxJobsPU", 9},  {"MaxJobsPU", 8, "MaxJobsPU", 9},
    {"MaxSubmitJobs", 4, "MaxSubmit", 9},   {"MaxSubmitJobsPerUser", 10, "MaxSubmitPU", 11},
    {"MaxSubmitPA", 11, "MaxSubmitPA", 11}, {"MaxSubmitPU", 10, "MaxSubmitPU", 11},
    {"MaxTRES", 7, "MaxTRES", 13},          {"MaxTRESMins", 7, "MaxTRESMins", 13},
    {"MaxTRESPA", 9, "MaxTRESPA", 13},      {"MaxTRESPerJob", 7, "MaxTRES", 13},
    {"MaxTRESPerNode", 11, "MaxTRESPerNode", 13}, {"MaxTRESPerUser", 11, "MaxTRESPU", 13},
    {"MaxTRESPJ", 9, "MaxTRES", 13},        {"MaxTRESPU", 9, "MaxTRESPU", 13},
    {"MaxWall", 4, "MaxWall", 11},          {"MinTRES", 4, "MinTRES", 13},
    {"Name", 2, "Name", 10},                {"Organization", 1, "Org", 20},
    {"ParentName", 7, "ParentName", 10},    {"Partition", 4, "Partition", 10},
    {"Preempt", 7, "Preempt", 10},          {"PreemptExemptTime", 8, "PreemptExemptTime", 19},
    {"PreemptMode", 8, "PreemptMode", 11},  {"Priority", 3, "Priority", 10},
    {"QOS", 1, "QOS", 20},                  {"Reclaimable", 3, "Reclaimable", 11},
    {"Share", 1, "Share", 9},               {"UsageFactor", 6, "UsageFactor", 11},
    {"UsageThres", 6, "UsageThres", 10},    {"User", 1, "User", 10},
    {"Weight", 2, "Weight", 6},
};

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// One cell: "%*.*s " (or "%-*.*s "), a value longer than the width cut with '+' at its end.
void Cell(std::string& out, std::string v, int width) {
  size_t w = static_cast<size_t>(std::abs(width));
  if (v.size() > w) {
    v.resize(w);
    if (w) v[w - 1] = '+';
  }
  std::string pad(w - v.size(), ' ');
  out += width < 0 ? v + pad : pad + v;
  out += ' ';
}

}  // namespace

Result<std::vector<AcctmgrField>> ParseAcctmgrFormat(const std::string& spec) {
  std::vector<AcctmgrField> out;
  for (const auto& item : Split(spec, ',')) {
    std::string name = item;
    int width = 0;
    bool has_width = false;
    size_t pct = item.find('%');
    if (pct != std::string::npos) {
      name = item.substr(0, pct);
      width = std::atoi(item.c_str() + pct + 1);
      has_width = true;
    }
    const Known* hit = nullptr;
    for (const auto& k : kFields) {
      size_t n = std::max(name.size(), k.min_len);
      if (strncasecmp(k.name, name.c_str(), n) == 0) {
        hit = &k;
        break;
      }
    }
    if (!hit) return InvalidArgument("Invalid field requested: \"" + name + "\"");
    out.push_back({hit->header, has_width ? width : hit->width});
  }
  if (out.empty()) return InvalidArgument("format= names no field");
  return out;
}

std::string DefaultAcctmgrFormat(const std::string& entity) {
  if (entity == "account") return "Account,Descr,Org";
  if (entity == "user") return "User,DefaultAccount,AdminLevel";
  if (entity == "qos")
    return "Name,Priority,GraceTime,Preempt,PreemptExemptTime,PreemptMode,Flags%40,UsageThres,"
           "UsageFactor,GrpTRES,GrpTRESMins,GrpTRESRunMins,GrpJobs,GrpSubmit,GrpWall,MaxTRES,"
           "MaxTRESPerNode,MaxTRESMins,MaxWall,MaxTRESPU,MaxJobsPU,MaxSubmitPU,MaxTRESPA,MaxJobsPA,"
           "MaxSubmitPA,MinTRES";
  return "Cluster,Account,User,Partition,Share,Priority,GrpJobs,GrpTRES,GrpSubmit,GrpWall,"
         "GrpTRESMins,MaxJobs,MaxTRES,MaxTRESPerNode,MaxSubmit,MaxWall,MaxTRESMins,QOS,DefaultQOS,"
         "GrpTRESRunMins";
}

std::string FormatAcctmgrTable(const std::vector<AcctmgrField>& fields,
                               const std::vector<AcctmgrRow>& rows, AcctmgrLayout layout,
                               bool header) {
  auto line = [&](const std::vector<std::string>& values) {
    std::string out;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (layout == AcctmgrLayout::kColumns) Cell(out, values[i], fields[i].width);
      else if (layout == AcctmgrLayout::kParsable2 && i + 1 == fields.size()) out += values[i];
      else out += values[i] + "|";
    }
    return out + "\n";
  };
  std::string out;
  if (header) {
    std::vector<std::string> names, dashes;
    for (const auto& f : fields) {
      names.push_back(f.header);
      dashes.push_back(std::string(static_cast<size_t>(std::abs(f.width)), '-'));
    }
    if (layout == AcctmgrLayout::kColumns) {
      std::vector<AcctmgrField> right = fields;  // headers are right-justified whatever the sign
      for (auto& f : right) f.width = std::abs(f.width);
      std::string h, d;
      for (size_t i = 0; i < right.size(); ++i) {
        Cell(h, names[i], right[i].width);
        Cell(d, dashes[i], -right[i].width);
      }
      out += h + "\n" + d + "\n";
    } else {
      out += line(names);
    }
  }
  for (const auto& row : rows) {
    std::vector<std::string> values;
    for (const auto& f : fields) {
      auto it = std::find_if(row.begin(), row.end(),
                             [&](const auto& kv) { return kv.first == f.header; });
      values.push_back(it == row.end() ? "" : it->second);
    }
    out += line(values);
  }
  return out;
}

}  // namespace tessera::cli
