// Reuse of acknowledged job directories (spool.h) and WriteFileAtomic's reuse of a .tmp inode.
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
  REQUIRE(WriteFileAtomic(spool.JobDir(id) + "/isolation", "cgroup_root=/x\n",
                          Durability::kProcessCrash)
              .ok());
  WriteAll(spool.ScriptFile(id), "#!/bin/sh\necho secret of " + std::to_string(id) + "\n");
  REQUIRE(WriteFileAtomic(spool.PidFile(id), "4242 17\n", Durability::kProcessCrash).ok());
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
  // Nothing of job 1 reads as job 2's status, stepd, log, isolation or script (its launch.pb is
  // rewritten before anything reads it).
  CHECK(ReadStatusFile(spool.StatusFile(2)).status().code() == Code::kNotFound);
  CHECK(spool.ReadPid(2) == 0);
  CHECK(!std::filesystem::exists(spool.JobDir(2) + "/isolation"));
  CHECK(ReadAll(spool.JobDir(2) + "/stepd.log").empty());
  CHECK(!std::filesystem::exists(spool.ScriptFile(2)));
  REQUIRE(spool.ListJobs().ok());
  CHECK(*spool.ListJobs() == std::vector<uint64_t>{2});
  // The writes take the old inodes back: same inodes, new contents, the new mode.
  REQUIRE(WriteFileInPlace(spool.LaunchFile(2), "job 2", 0600).ok());
  CHECK(Inode(spool.LaunchFile(2)) == launch_inode);
  CHECK(ReadAll(spool.LaunchFile(2)) == "job 2");  // shorter than job 1's: cut to size
  CHECK(Mode(spool.LaunchFile(2)) == 0600);
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

TEST_CASE("a script inode is reused for the same user only, and that user's directory is chosen") {
  ScratchDir d;
  Spool spool(d.path());
  REQUIRE(spool.Init().ok());
  const uint32_t alice = 4001, bob = 4002;
  for (uint64_t id : {1, 2}) {
    FillJob(spool, id);
    REQUIRE(::chown(spool.ScriptFile(id).c_str(), id == 1 ? alice : bob, 0) == 0);
  }
  ino_t alice_script = Inode(spool.ScriptFile(1));
  REQUIRE(spool.RemoveJobDir(1).ok());  // alice's directory, then bob's
  REQUIRE(spool.RemoveJobDir(2).ok());
  // alice gets her own directory back, not the last one given up: her script inode stays.
  REQUIRE(spool.CreateJobDir(3, alice).ok());
  REQUIRE(std::filesystem::exists(spool.ScriptFile(3)));
  CHECK(Inode(spool.ScriptFile(3)) == alice_script);
  // carol gets bob's directory without bob's script.
  REQUIRE(spool.CreateJobDir(4, 4003).ok());
  CHECK(!std::filesystem::exists(spool.ScriptFile(4)));
  CHECK(spool.FreeDirs() == 0);
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

TEST_CASE("WriteFileAtomic reuses an existing .tmp inode, sets the mode, refuses a symlink") {
  ScratchDir d;
  std::string p = d.path() + "/f";
  WriteAll(p + ".tmp", "leftover contents, longer than the new ones");
  ino_t ino = Inode(p + ".tmp");
  REQUIRE(WriteFileAtomic(p, "new", Durability::kProcessCrash, 0600).ok());
  CHECK(Inode(p) == ino);
  CHECK(ReadAll(p) == "new");
  CHECK(Mode(p) == 0600);
  CHECK(!std::filesystem::exists(p + ".tmp"));
  REQUIRE(::symlink(p.c_str(), (d.path() + "/g.tmp").c_str()) == 0);
  Status st = WriteFileAtomic(d.path() + "/g", "x", Durability::kProcessCrash);
  CHECK(!st.ok());
  CHECK(st.message().find(d.path() + "/g.tmp") != std::string::npos);
  CHECK(ReadAll(p) == "new");  // the symlink's target is untouched
  CHECK(!std::filesystem::exists(d.path() + "/g"));
}

TEST_CASE("a reused directory's old status is no status: a dead stepd there is lost") {
  ScratchDir d;
  Spool spool(d.path());
  REQUIRE(spool.Init().ok());
  FillJob(spool, 5);
  REQUIRE(spool.RemoveJobDir(5).ok());
  REQUIRE(spool.CreateJobDir(6).ok());
  JobStatus st;
  CHECK(ClassifyJob(spool, ProcStepdProbe(), 6, &st) == JobDirState::kLost);
}
