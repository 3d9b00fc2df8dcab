// Job states: Slurm names, short codes, parsing and which states are final.
#include "common/job_state.h"

#include <catch2/catch.hpp>

namespace tessera {
namespace {

TEST_CASE("job state: names and codes match Slurm", "[job_state]") {
  struct Row {
    JobState s;
    const char* name;
    const char* code;
    bool finished;
  };
  const Row rows[] = {
      {JobState::kPending, "PENDING", "PD", false},
      {JobState::kRunning, "RUNNING", "R", false},
      {JobState::kSuspended, "SUSPENDED", "S", false},
      {JobState::kCompleting, "COMPLETING", "CG", false},
      {JobState::kCompleted, "COMPLETED", "CD", true},
      {JobState::kCancelled, "CANCELLED", "CA", true},
      {JobState::kFailed, "FAILED", "F", true},
      {JobState::kTimeout, "TIMEOUT", "TO", true},
      {JobState::kNodeFail, "NODE_FAIL", "NF", true},
      {JobState::kPreempted, "PREEMPTED", "PR", true},
      {JobState::kOutOfMemory, "OUT_OF_MEMORY", "OOM", true},
      {JobState::kBootFail, "BOOT_FAIL", "BF", true},
      {JobState::kDeadline, "DEADLINE", "DL", true},
  };
  for (const Row& r : rows) {
    INFO(r.name);
    CHECK(std::string(JobStateName(r.s)) == r.name);
    CHECK(std::string(JobStateCode(r.s)) == r.code);
    CHECK(IsFinished(r.s) == r.finished);
    CHECK(ParseJobState(r.name) == r.s);
    CHECK(ParseJobState(r.code) == r.s);
  }
  CHECK(std::string(JobStateName(JobState::kUnspecified)) == "UNKNOWN");
  CHECK_FALSE(IsFinished(JobState::kUnspecified));
}

TEST_CASE("job state: parsing is case-insensitive and accepts CANCELED", "[job_state]") {
  CHECK(ParseJobState("pd") == JobState::kPending);
  CHECK(ParseJobState("Running") == JobState::kRunning);
  CHECK(ParseJobState("cd") == JobState::kCompleted);
  CHECK(ParseJobState("canceled") == JobState::kCancelled);
  CHECK(ParseJobState("oom") == JobState::kOutOfMemory);
  CHECK_FALSE(ParseJobState("").has_value());
  CHECK_FALSE(ParseJobState("RUN").has_value());
  CHECK_FALSE(ParseJobState("PENDINGX").has_value());
}

}  // namespace
}  // namespace tessera
