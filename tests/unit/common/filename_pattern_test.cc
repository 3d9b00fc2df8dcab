// Slurm output filename patterns (%j, %x, %u, %A, %a, %N, %%, widths).
#include "common/filename_pattern.h"

#include <catch2/catch.hpp>

namespace tessera {
namespace {

FilenameVars Vars() {
  FilenameVars v;
  v.job_id = 42;
  v.job_name = "train";
  v.user = "alice";
  v.node = "gpu01";
  return v;
}

TEST_CASE("filename pattern: default names", "[filename_pattern]") {
  CHECK(ExpandFilenamePattern("", Vars(), "/home/alice") == "/home/alice/slurm-42.out");
  FilenameVars a = Vars();
  a.array_job_id = 40;
  a.array_index = 2;
  CHECK(ExpandFilenamePattern("", a, "/w") == "/w/slurm-40_2.out");
}

TEST_CASE("filename pattern: codes", "[filename_pattern]") {
  CHECK(ExpandFilenamePattern("%x-%j.%u.%N.log", Vars(), "") == "train-42.alice.gpu01.log");
  CHECK(ExpandFilenamePattern("100%%-%j", Vars(), "") == "100%-42");
  // Not an array job: %A is the job id and %a is Slurm's NO_VAL-ish 4294967294.
  CHECK(ExpandFilenamePattern("%A_%a", Vars(), "") == "42_4294967294");
}

TEST_CASE("filename pattern: widths zero-pad numbers", "[filename_pattern]") {
  CHECK(ExpandFilenamePattern("out-%6j", Vars(), "") == "out-000042");
  FilenameVars a = Vars();
  a.array_job_id = 7;
  a.array_index = 3;
  CHECK(ExpandFilenamePattern("%4A_%3a", a, "") == "0007_003");
  CHECK(ExpandFilenamePattern("%1j", Vars(), "") == "42");  // width never truncates
}

TEST_CASE("filename pattern: unknown codes and trailing % stay verbatim", "[filename_pattern]") {
  CHECK(ExpandFilenamePattern("a%qb", Vars(), "") == "a%qb");
  CHECK(ExpandFilenamePattern("end%", Vars(), "") == "end%");
  CHECK(ExpandFilenamePattern("end%5", Vars(), "") == "end%5");
}

TEST_CASE("filename pattern: relative results join the workdir", "[filename_pattern]") {
  CHECK(ExpandFilenamePattern("/abs/%j.out", Vars(), "/w") == "/abs/42.out");
  CHECK(ExpandFilenamePattern("logs/%j.out", Vars(), "/w") == "/w/logs/42.out");
  CHECK(ExpandFilenamePattern("logs/%j.out", Vars(), "") == "logs/42.out");
}

}  // namespace
}  // namespace tessera

TEST_CASE("array codes are resolved per element and everything else is left for the node") {
  CHECK(tessera::ExpandArrayCodes("out-%A_%a-%j-%%.txt", 40, 7) == "out-40_7-%j-%%.txt");
  CHECK(tessera::ExpandArrayCodes("", 40, 3) == "slurm-40_3.out");
  CHECK(tessera::ExpandArrayCodes("x%3a", 40, 3) == "x003");
}

namespace tessera {
namespace {

// Issue 19: every code of Slurm's filename pattern table.
TEST_CASE("filename pattern: step, node, task, restart and array codes", "[filename_pattern]") {
  FilenameVars b = Vars();  // the batch step
  CHECK(ExpandFilenamePattern("w-%J.out", b, "") == "w-42.out");
  CHECK(ExpandFilenamePattern("%s-%n-%t-%r", b, "") == "batch-0-0-0");
  FilenameVars s = Vars();
  s.step_id = 3;
  s.node_id = 1;
  s.task_id = 7;
  s.restart_count = 2;
  CHECK(ExpandFilenamePattern("w-%J.out", s, "") == "w-42.3.out");
  CHECK(ExpandFilenamePattern("%s_%n_%t_%r", s, "") == "3_1_7_2");
  CHECK(ExpandFilenamePattern("job%2j-%2t.out", s, "") == "job42-07.out");
  CHECK(ExpandFilenamePattern("%3t", s, "") == "007");
  FilenameVars a = Vars();
  a.array_job_id = 40;
  a.array_index = 13;
  CHECK(ExpandFilenamePattern("%A_%a_%b", a, "") == "40_13_3");
  CHECK(ExpandFilenamePattern("%b", Vars(), "") == "4");  // 4294967294 % 10, as Slurm
  CHECK(ExpandArrayCodes("%A-%2b-%j", 40, 13) == "40-03-%j");
}

TEST_CASE("filename pattern: a backslash turns expansion off", "[filename_pattern]") {
  CHECK(ExpandFilenamePattern("out\\%j-%t", Vars(), "/w") == "/w/out%j-%t");
  CHECK(ExpandArrayCodes("a\\_%a", 40, 1) == "a\\_%a");
}

}  // namespace
}  // namespace tessera
