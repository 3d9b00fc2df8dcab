#pragma once
// squeue's output: the -o/--format language and the default, long and JSON views.
//
// Format language (squeue's): literal text is copied; "%[.][width]c" prints field c, "." right-
// justifies, a width pads (and truncates, except node lists) to that many columns; "%%" is a
// literal '%'. Fields: %i %A job id, %j name, %u user, %U uid, %g group, %G gid, %t state code,
// %T state, %M elapsed, %l time limit, %L time left, %D nodes, %C cpus, %P partition,
// %R reason or nodelist, %r reason, %N nodelist, %V submit, %S start, %e end, %a account,
// %q qos, %b gres, %Q priority, %Z workdir, %o command, %k comment, %E dependency,
// %f constraint, %y nice, %F array job id, %K array task id, %c min cpus, %m min memory,
// %v reservation, %x excluded nodes, %B first allocated node, %p priority (0..1), %n requested
// nodes, %Y the nodes a pending job is expected to start on (SCHEDNODES). %i prints an array element as "1230_4" and a pending array as "1230_[5-15%4]"; %S is
// the expected start for a pending job (N/A when the controller gave none).
//
// Long format (-O/--Format, squeue's): "Field[:[.]width]" comma separated, names
// case-insensitive, default width 20, "." right-justifies; see kLongFields in queue_format.cc.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/lib/id_names.h"
#include "common/job_state.h"
#include "common/status.h"
#include "tessera/v1/types.pb.h"

namespace tessera::cli {

inline constexpr char kDefaultQueueFormat[] = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
inline constexpr char kLongQueueFormat[] = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
inline constexpr char kStartQueueFormat[] = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";
// Codes of -O fields that have no one-letter form.
inline constexpr char kCodeTasks = 1, kCodeTresAlloc = 2, kCodeGresAlloc = 3;

struct QueueField {
  char code = 0;   // 0 for a literal-only piece
  int width = 0;
  bool right = false;
  std::string suffix;  // literal text printed after the field
};

struct QueueFormat {
  std::string prefix;  // literal text before the first field
  std::vector<QueueField> fields;
};

// Errors: invalid format specification "%y" ... names the code.
Result<QueueFormat> ParseQueueFormat(std::string_view fmt);

// -O/--Format. Errors name the field: invalid field "Foo" in --Format.
Result<QueueFormat> ParseQueueLongFormat(std::string_view fmt);

// squeue's state order for sorting: pending, running, suspended, completing, then finished.
int QueueStateRank(JobState s);
// squeue's default order: partition, then state (pending first), then priority (high first),
// then job id.
void SortQueue(std::vector<tessera::v1::JobInfo>& jobs);
// squeue -S: comma-separated format codes, each optionally prefixed "+" (ascending, default)
// or "-" (descending), e.g. "-t,+i" or "P,-p". Errors name the bad key.
Status SortQueueBy(std::vector<tessera::v1::JobInfo>& jobs, std::string_view keys,
                   const IdNames& names, int64_t now);
// squeue -r: a pending array remainder ("1230_[5-7]") becomes one line per index.
std::vector<tessera::v1::JobInfo> ExpandArrayRecords(const std::vector<tessera::v1::JobInfo>& jobs);

// The header line (with "\n") and one line per job.
std::string FormatQueue(const std::vector<tessera::v1::JobInfo>& jobs, const QueueFormat& fmt,
                        bool header, const IdNames& names, int64_t now);

// {"jobs":[{...}, ...]} with one flat object per job (see cli/README.md for the keys).
std::string FormatQueueJson(const std::vector<tessera::v1::JobInfo>& jobs, const IdNames& names,
                            int64_t now);

}  // namespace tessera::cli
