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
// read /dev/null; trun_stdin.h); none: /dev/null; a file pattern: each task reads its own
// expanded file on its node (the file is opened there as the step's user).
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
  std::string pattern;
};
// Parses one -o/-e/-i value. Errors name the option.
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

// The input file of every rank of the step for -i PATTERN (absolute paths); empty for the other
// forms (all, none, N: trun_stdin.h).
Result<std::map<uint32_t, std::string>> TaskInputs(const IoSpec& in,
                                                   const tessera::v1::CreateStepResponse& step,
                                                   const IoNames& names);

}  // namespace tessera::cli
