// Reuse of acknowledged job directories (spool.h) and in-place spool writes (job_status.h).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "noded/job_status.h"
#include "noded/spool.h"
#include "tests/unit/noded/test_util.h"

using namespace tessera;
using namespace tessera::noded;
using tessera::noded::testing::ReadAll;
using tessera::noded::testing::ScratchDir;
using tessera::noded::testing::WriteAll;

namespace {

ino_t Inode(const std::string& path) {
  struct stat st{};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_ino;
}

mode_t Mode(const std::string& path) {
  struct stat st{};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

size_t CountFree(const std::string& root) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(root))
    if (e.path().filename().string().rfind("free.", 0) == 0) ++n;
  return n;
}

// A finished job's files as noded and stepd leave them.
void FillJob(Spool& spool, uint64_t id) {
  REQUIRE(spool.CreateJobDir(id).ok());
  REQUIRE(WriteFileInPlace(spool.LaunchFile(id), "launch of " + std::to_string(id), 0600).ok());
  REQUIRE(WriteFileInPlace(spool.JobDir(id) + "/isolation", "cgroup_root=/x\n", 0644).ok());
  WriteAll(spool.ScriptFile(id), "#!/bin/sh\necho secret of " + std::to_string(id) + "\n");
  REQUIRE(WriteFileInPlace(spool.PidFile(id), "4242 17\n", 0644).ok());
  WriteAll(spool.JobDir(id) + "/stepd.log", "job log\n");
  JobStatus done;
  done.state = JobState::kCompleted;
  REQUIRE(WriteStatusFile(spool.StatusFile(id), done).ok());
}

}  // namespace

TEST_CASE("an acknowledged job directory is reused in place by the next job") {
  ScratchDir d;
  Spool spool(d.path());
  REQUIRE(spool.Init().ok());
  FillJob(spool, 1);
  ino_t launch_inode = Inode(spool.LaunchFile(1));
  ino_t status_inode = Inode(spool.StatusFile(1));

  REQUIRE(spool.RemoveJobDir(1).ok());
  CHECK(!std::filesystem::exists(spool.JobDir(1)));
  CHECK(spool.FreeDirs() == 1);
  CHECK(CountFree(d.path()) == 1);
  REQUIRE(spool.ListJobs().ok());
  CHECK(spool.ListJobs()->empty());  // a free directory is no job

  REQUIRE(spool.CreateJobDir(2).ok());
  CHECK(spool.FreeDirs() == 0);
  CHECK(CountFree(d.path()) == 0);
  // Nothing of job 1 reads as job 2's: no status, no stepd, no log, no isolation, no script.
  CHECK(ReadStatusFile(spool.StatusFile(2)).status().code() == Code::kNotFound);
  CHECK(spool.ReadPid(2) == 0);
  CHECK(ReadAll(spool.JobDir(2) + "/stepd.log").empty());
  CHECK(ReadAll(spool.JobDir(2) + "/isolation").empty());
  CHECK(!std::filesystem::exists(spool.ScriptFile(2)));
  // The files that stay are rewritten in place: same inodes, new contents.
  REQUIRE(WriteFileInPlace(spool.LaunchFile(2), "launch of 2", 0600).ok());
  CHECK(Inode(spool.LaunchFile(2)) == launch_inode);
  CHECK(ReadAll(spool.LaunchFile(2)) == "launch of 2");
  JobStatus failed;
  failed.state = JobState::kFailed;
  failed.exit_code = 3;
  REQUIRE(WriteStatusFile(spool.StatusFile(2), failed).ok());
  CHECK(Inode(spool.StatusFile(2)) == status_inode);
  REQUIRE(ReadStatusFile(spool.StatusFile(2)).ok());
  CHECK(ReadStatusFile(spool.StatusFile(2))->exit_code == 3);
  // A job id already in the spool is refused, free directories or not.
  REQUIRE(spool.RemoveJobDir(2).ok());
  REQUIRE(spool.CreateJobDir(3).ok());
  FillJob(spool, 4);
  CHECK(spool.CreateJobDir(3).code() == Code::kAlreadyExists);
}

TEST_CASE("at most kMaxFreeDirs are kept, and a restarted noded takes them up") {
  ScratchDir d;
  const size_t extra = 3;
  {
    Spool spool(d.path());
    REQUIRE(spool.Init().ok());
    for (uint64_t id = 1; id <= Spool::kMaxFreeDirs + extra; ++id) FillJob(spool, id);
    for (uint64_t id = 1; id <= Spool::kMaxFreeDirs + extra; ++id)
      REQUIRE(spool.RemoveJobDir(id).ok());
    CHECK(spool.FreeDirs() == Spool::kMaxFreeDirs);
    CHECK(CountFree(d.path()) == Spool::kMaxFreeDirs);
    for (uint64_t id = 1; id <= Spool::kMaxFreeDirs + extra; ++id)
      CHECK(!std::filesystem::exists(spool.JobDir(id)));
  }
  WriteAll(d.path() + "/free.notanumber", "ignored");
  Spool again(d.path());
  REQUIRE(again.Init().ok());
  CHECK(again.FreeDirs() == Spool::kMaxFreeDirs);
  // New free directories get names after the ones found, so nothing is overwritten.
  REQUIRE(again.CreateJobDir(500).ok());
  REQUIRE(again.RemoveJobDir(500).ok());
  CHECK(again.FreeDirs() == Spool::kMaxFreeDirs);
  CHECK(CountFree(d.path()) == Spool::kMaxFreeDirs + 1);  // + free.notanumber
}

TEST_CASE("WriteFileInPlace keeps the inode, sets the mode and refuses a symlink") {
  ScratchDir d;
  std::string p = d.path() + "/f";
  REQUIRE(WriteFileInPlace(p, "first, longer contents", 0644).ok());
  ino_t ino = Inode(p);
  REQUIRE(WriteFileInPlace(p, "second", 0600).ok());
  CHECK(Inode(p) == ino);
  CHECK(ReadAll(p) == "second");
  CHECK(Mode(p) == 0600);
  REQUIRE(::symlink(p.c_str(), (d.path() + "/link").c_str()) == 0);
  Status st = WriteFileInPlace(d.path() + "/link", "x", 0644);
  CHECK(!st.ok());
  CHECK(st.message().find(d.path() + "/link") != std::string::npos);
  CHECK(ReadAll(p) == "second");
}

TEST_CASE("an empty status file reads as none: a dead stepd with one is lost") {
  ScratchDir d;
  Spool spool(d.path());
  REQUIRE(spool.Init().ok());
  REQUIRE(spool.CreateJobDir(5).ok());
  WriteAll(spool.StatusFile(5), "");  // stepd killed between truncating and writing
  CHECK(ReadStatusFile(spool.StatusFile(5)).status().code() == Code::kNotFound);
  JobStatus st;
  CHECK(ClassifyJob(spool, ProcStepdProbe(), 5, &st) == JobDirState::kLost);
}
