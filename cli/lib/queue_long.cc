// squeue's -O/--Format long field names, and -r (one line per pending array index).
#include <cstring>

#include "cli/lib/batch_values.h"
#include "cli/lib/queue_format.h"
#include "cli/lib/text_util.h"
#include "common/duration.h"

namespace tessera::cli {
namespace {

struct LongField {
  const char* name;
  char code;
};

// squeue -O names (case-insensitive) and the format code that prints them.
constexpr LongField kLongFields[] = {
    {"JobID", 'A'},          {"JobArrayID", 'i'},     {"ArrayJobID", 'F'},
    {"ArrayTaskID", 'K'},    {"Name", 'j'},           {"UserName", 'u'},
    {"UserID", 'U'},         {"GroupName", 'g'},      {"GroupID", 'G'},
    {"State", 'T'},          {"StateCompact", 't'},   {"Partition", 'P'},
    {"TimeUsed", 'M'},       {"TimeLimit", 'l'},      {"TimeLeft", 'L'},
    {"NumNodes", 'D'},       {"NumCPUs", 'C'},        {"NumTasks", kCodeTasks},
    {"NodeList", 'N'},       {"Reason", 'r'},         {"ReasonList", 'R'},
    {"SubmitTime", 'V'},     {"StartTime", 'S'},      {"EndTime", 'e'},
    {"Priority", 'p'},       {"PriorityLong", 'Q'},   {"Account", 'a'},
    {"QOS", 'q'},            {"WorkDir", 'Z'},        {"Command", 'o'},
    {"Comment", 'k'},        {"Dependency", 'E'},     {"Feature", 'f'},
    {"Nice", 'y'},           {"tres-per-node", 'b'},  {"Gres", 'b'},
    {"tres-alloc", kCodeTresAlloc},                   {"GresAlloc", kCodeGresAlloc},
    {"Reservation", 'v'},    {"ExcNodes", 'x'},       {"BatchHost", 'B'},
    {"MinCpus", 'c'},        {"MinMemory", 'm'},      {"ReqNodes", 'n'},
    {"SchedNodes", 'Y'},
};

}  // namespace

Result<QueueFormat> ParseQueueLongFormat(std::string_view fmt) {
  QueueFormat out;
  for (std::string item : Split(fmt, ',')) {
    item = Trim(item);
    if (item.empty()) continue;
    std::string name = item, width;
    if (size_t colon = item.find(':'); colon != std::string::npos) {
      name = item.substr(0, colon);
      width = item.substr(colon + 1);
    }
    const LongField* def = nullptr;
    for (const auto& f : kLongFields)
      if (EqualsIgnoreCase(f.name, name)) def = &f;
    if (!def) {
      std::string valid;
      for (const auto& f : kLongFields) valid += std::string(valid.empty() ? "" : " ") + f.name;
      return InvalidArgument("invalid field \"" + name + "\" in --Format; valid fields: " + valid);
    }
    QueueField f;
    f.code = def->code;
    f.width = 20;  // squeue's default -O width
    if (!width.empty()) {
      if (width[0] == '.') {
        f.right = true;
        width = width.substr(1);
      }
      if (!width.empty()) {
        auto n = ParseUint(width, "width");
        if (!n.ok() || *n == 0 || *n > 1000)
          return InvalidArgument("invalid width \"" + width + "\" for field " + def->name);
        f.width = static_cast<int>(*n);
      }
    }
    out.fields.push_back(f);  // no separator: the width includes the padding, as squeue
  }
  if (out.fields.empty()) return InvalidArgument("empty --Format");
  return out;
}

std::vector<tessera::v1::JobInfo> ExpandArrayRecords(
    const std::vector<tessera::v1::JobInfo>& jobs) {
  std::vector<tessera::v1::JobInfo> out;
  for (const auto& j : jobs) {
    auto idx = j.array_task_str().empty() ? Result<std::vector<uint32_t>>(InvalidArgument(""))
                                          : ExpandArraySpec(j.array_task_str());
    if (!idx.ok()) {
      out.push_back(j);
      continue;
    }
    for (uint32_t i : *idx) {
      tessera::v1::JobInfo e = j;
      e.set_array_task_str("");
      e.set_array_task_id(i);
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace tessera::cli
