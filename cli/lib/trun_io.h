#pragma once
// trun's -o/--output, -e/--error and -i/--input (srun's "IO Redirection", issue 19).
// Each takes srun's forms:
//   all (default)   output of every task to trun's stdout/stderr
//   none            output discarded; stdin closed
//   N               only task N's output to trun (a number); input: see below
//   PATTERN         a filename pattern (common/filename_pattern.h: %j %J %s %t %n %N %u %x %A %a
//                   %b %r %%, widths, "\" turns expansion off) expanded per task; tasks whose
//                   names agree share one file (opened once, truncated unless
//                   --open-mode=append). Relative names are relative to trun's directory.
// Without -e, stderr follows -o (srun: "both stdout and stderr will be directed to the file").
// Input: -i all (default) and -i N: trun's stdin goes to every task, or to task N (the others
// read /dev/null; trun_stdin.h); none: /dev/null; a file name without %t %n %N %u: trun opens
// it and every task reads it (broadcast, as srun); a pattern with them: each task reads its own
// expanded file on its node (opened there as the step's user).
// As srun, N that is not a task of the step (N >= ntasks) is a file name, for -o/-e/-i alike.
// Files are written by trun (the submit side), as srun does for names without %t %n %N.
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/lib/rank_output.h"
#include "common/status.h"
#include "tessera/v1/controller.pb.h"

namespace tessera::cli {

struct IoSpec {
  enum Kind { kAll, kNone, kTask, kFile } kind = kAll;
  uint32_t task = 0;
  std::string pattern;  // kFile; kTask: the number as written (a file when no such task)
};
// Parses one -o/-e/-i value ("-" is all, as srun). Errors name the option.
Result<IoSpec> ParseIoSpec(const std::string& option, const std::string& value);

// What a pattern needs besides the step's layout.
struct IoNames {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  std::string job_name, user, cwd;
  uint64_t array_job_id = 0;   // 0: not an array element
  int64_t array_index = -1;
  bool append = false;         // --open-mode=append
};

// Routes every (rank, stream) of a step to its sink. Thread-safe.
class StepOutput {
 public:
  // Opens the files (kFile specs) for every rank of `step`; an error names the file. `e` is the
  // resolved stderr spec (the caller passes `o` when -e was not given).
  static Result<std::unique_ptr<StepOutput>> Open(std::ostream& out, std::ostream& err,
                                                  bool label, const IoSpec& o, const IoSpec& e,
                                                  const tessera::v1::CreateStepResponse& step,
                                                  const IoNames& names);
  void Write(uint32_t rank, uint32_t stream, const std::string& data);
  void Flush(uint32_t rank);
  void FlushAll();

 private:
  StepOutput(std::ostream& out, std::ostream& err, bool label, uint32_t ntasks);
  RankOutput terminal_;
  bool label_;
  uint32_t ntasks_;
  std::vector<std::unique_ptr<std::ofstream>> files_;
  std::vector<std::unique_ptr<RankOutput>> file_outputs_;
  // (rank, stream) -> sink: nullptr = discard, &terminal_ or one of file_outputs_.
  std::map<std::pair<uint32_t, uint32_t>, RankOutput*> route_;
};

// -i PATTERN without %t %n %N %u (srun: "fname->type" not per task): the one file every task
// reads, which trun opens itself and broadcasts (trun_stdin.h), as srun does on its host; ""
// for a pattern that names a file per task or node, and for the other forms.
std::string SharedInputPath(const IoSpec& in, const IoNames& names);

// The input file of every rank of the step for -i PATTERN (absolute paths), opened by each
// task on its node; empty for the other forms (all, none, N: trun_stdin.h). Callers give a
// SharedInputPath pattern to trun_stdin.h instead.
Result<std::map<uint32_t, std::string>> TaskInputs(const IoSpec& in,
                                                   const tessera::v1::CreateStepResponse& step,
                                                   const IoNames& names);

}  // namespace tessera::cli
