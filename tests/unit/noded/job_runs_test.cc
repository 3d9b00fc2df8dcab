// Runs (launch numbers) on the node: a requeued job's new run never shares its directory with
// the earlier run, and signals and acks reach only the run they name (hardening issue, part 4).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <set>

#include "common/clock.h"
#include "noded/job_manager.h"
#include "noded/job_status.h"
#include "noded/spool.h"
#include "tests/unit/noded/test_util.h"

using namespace tessera;
using namespace tessera::noded;
using tessera::noded::testing::ReadAll;
using tessera::noded::testing::ScratchDir;
using tessera::noded::testing::WriteAll;

namespace {

class RunsProbe final : public StepdProbe {
 public:
  bool IsStepdAlive(pid_t pid, const std::string& dir) const override {
    return alive.count({pid, dir}) > 0;
  }
  std::set<std::pair<pid_t, std::string>> alive;
};

class RunsControl final : public StepdControl {
 public:
  explicit RunsControl(RunsProbe& probe) : probe_(probe) {}
  Status Start(uint64_t id, const std::string& dir) override {
    ++starts;
    pid_t pid = 1000 + static_cast<pid_t>(id);
    WriteAll(dir + "/stepd.pid", std::to_string(pid) + "\n");
    probe_.alive.insert({pid, dir});
    return Status::Ok();
  }
  Status Cancel(uint64_t, pid_t pid) override {
    cancels.push_back(pid);
    return Status::Ok();
  }
  Status Forward(uint64_t, pid_t pid, int sig) override {
    forwards.push_back({pid, sig});
    return Status::Ok();
  }
  int starts = 0;
  std::vector<pid_t> cancels;
  std::vector<std::pair<pid_t, int>> forwards;

 private:
  RunsProbe& probe_;
};

tessera::v1::LaunchJob LaunchRun(uint64_t id, uint64_t run) {
  tessera::v1::LaunchJob l;
  l.set_job_id(id);
  l.set_run(run);
  l.set_uid(geteuid());
  l.set_gid(getegid());
  l.set_script("#!/bin/sh\necho run " + std::to_string(run) + "\n");
  return l;
}

JobStatus Ended(JobState s) {
  JobStatus st;
  st.state = s;
  st.exit_signal = s == JobState::kCancelled ? 15 : 0;
  st.end_time = 1700000123;
  return st;
}

struct RunsFixture {
  ScratchDir dir;
  Spool spool{dir.path() + "/spool"};
  RunsProbe probe;
  RunsControl control{probe};
  FakeClock clock;
  std::vector<std::string> logs;
  JobManager jobs{spool, control, probe, clock,
                  [this](const std::string& m) { logs.push_back(m); }};
  RunsFixture() { REQUIRE(spool.Init().ok()); }
};

}  // namespace

TEST_CASE("a later run of a job waits for the earlier run to end and be acknowledged") {
  RunsFixture f;
  f.jobs.Launch(LaunchRun(5, 1));
  REQUIRE(f.jobs.IsRunning(5));
  auto out = f.jobs.TakeOutbox();
  REQUIRE(out.size() == 1);
  CHECK(out[0].started().run() == 1);

  // The job was requeued on the controller and launched again here (run 2) while run 1 still
  // runs: run 1 is cancelled, run 2 does not start yet, the node reports the job as run 2.
  f.jobs.Launch(LaunchRun(5, 2));
  CHECK(f.control.starts == 1);
  CHECK(f.control.cancels == std::vector<pid_t>{1005});
  CHECK(f.jobs.RunOf(5) == 2);
  CHECK(f.jobs.Running() == std::vector<uint64_t>{5});

  // Run 1 ends: its report carries run 1, not the job's newest run.
  REQUIRE(WriteStatusFile(f.spool.StatusFile(5), Ended(JobState::kCancelled)).ok());
  f.jobs.Poll();
  out = f.jobs.TakeOutbox();
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].has_finished());
  CHECK(out[0].finished().run() == 1);
  CHECK(out[0].finished().state() == tessera::v1::CANCELLED);
  REQUIRE(f.jobs.Unacked().size() == 1);
  CHECK(f.jobs.Unacked()[0].run() == 1);

  // An ack naming another run does not free run 1's directory.
  f.jobs.Ack(5, 2);
  CHECK(f.jobs.IsFinished(5));
  CHECK(f.control.starts == 1);

  // The ack of run 1 frees it; run 2 starts in a fresh directory with its own launch.pb.
  f.jobs.Ack(5, 1);
  CHECK(f.control.starts == 2);
  CHECK(f.jobs.IsRunning(5));
  CHECK(f.jobs.RunOfStarted(5) == 2);
  tessera::v1::LaunchJob stored;
  REQUIRE(stored.ParseFromString(ReadAll(f.spool.LaunchFile(5))));
  CHECK(stored.run() == 2);
  CHECK(!std::filesystem::exists(f.spool.StatusFile(5)));
  out = f.jobs.TakeOutbox();
  REQUIRE(out.size() == 1);
  CHECK(out[0].started().run() == 2);

  // Run 2 ends normally and reports run 2.
  REQUIRE(WriteStatusFile(f.spool.StatusFile(5), Ended(JobState::kCompleted)).ok());
  f.jobs.Poll();
  out = f.jobs.TakeOutbox();
  REQUIRE(out.size() == 1);
  CHECK(out[0].finished().run() == 2);
  CHECK(out[0].finished().state() == tessera::v1::COMPLETED);
}

TEST_CASE("launches of the same or an earlier run are ignored") {
  RunsFixture f;
  f.jobs.Launch(LaunchRun(6, 3));
  f.jobs.Launch(LaunchRun(6, 3));
  f.jobs.Launch(LaunchRun(6, 2));
  CHECK(f.control.starts == 1);
  CHECK(f.control.cancels.empty());
  CHECK(f.jobs.RunOf(6) == 3);
}

TEST_CASE("signals reach only the run they name") {
  RunsFixture f;
  f.jobs.Launch(LaunchRun(7, 3));
  f.jobs.Signal(7, 0, 2);   // an earlier run's cancel: not this run
  f.jobs.Signal(7, 10, 2);
  CHECK(f.control.cancels.empty());
  CHECK(f.control.forwards.empty());
  f.jobs.Signal(7, 10, 3);
  f.jobs.Signal(7, 0, 3);
  CHECK(f.control.forwards.size() == 1);
  CHECK(f.control.cancels == std::vector<pid_t>{1007});
}

TEST_CASE("a cancelled waiting run ends CANCELLED with its own run, without starting") {
  RunsFixture f;
  f.jobs.Launch(LaunchRun(8, 1));
  f.jobs.Launch(LaunchRun(8, 2));
  f.jobs.TakeOutbox();
  f.jobs.Signal(8, 0, 2);
  REQUIRE(WriteStatusFile(f.spool.StatusFile(8), Ended(JobState::kCancelled)).ok());
  f.jobs.Poll();
  f.jobs.TakeOutbox();
  f.jobs.Ack(8, 1);
  CHECK(f.control.starts == 1);
  auto out = f.jobs.TakeOutbox();
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].has_finished());
  CHECK(out[0].finished().run() == 2);
  CHECK(out[0].finished().state() == tessera::v1::CANCELLED);
  // and it survives a restart of noded (a status file in the job's directory)
  CHECK(ReadStatusFile(f.spool.StatusFile(8)).ok());
}

TEST_CASE("after a noded restart, finished and lost jobs are reported with their stored run") {
  RunsFixture f;
  for (uint64_t id : {3, 4}) {
    REQUIRE(f.spool.CreateJobDir(id).ok());
    WriteAll(f.spool.LaunchFile(id), LaunchRun(id, id + 10).SerializeAsString());
  }
  REQUIRE(WriteStatusFile(f.spool.StatusFile(3), Ended(JobState::kCompleted)).ok());
  WriteAll(f.spool.PidFile(4), "4242\n");  // no live stepd, no status: lost
  REQUIRE(f.jobs.Recover().ok());
  auto unacked = f.jobs.Unacked();
  REQUIRE(unacked.size() == 2);
  CHECK(unacked[0].job_id() == 3);
  CHECK(unacked[0].run() == 13);
  CHECK(unacked[1].job_id() == 4);
  CHECK(unacked[1].run() == 14);
  CHECK(unacked[1].message() == "tessera-stepd for job 4 was lost");
}
