#include <catch2/catch.hpp>

#include <sys/stat.h>
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

class FakeProbe final : public StepdProbe {
 public:
  bool IsStepdAlive(pid_t pid, const std::string& dir) const override {
    return alive.count({pid, dir}) > 0;
  }
  std::set<std::pair<pid_t, std::string>> alive;
};

class FakeControl final : public StepdControl {
 public:
  FakeControl(FakeProbe& probe) : probe_(probe) {}
  Status Start(uint64_t id, const std::string& dir) override {
    ++starts;
    if (!fail_with.empty()) return Internal(fail_with);
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
  std::string fail_with;
  std::vector<pid_t> cancels;
  std::vector<std::pair<pid_t, int>> forwards;

 private:
  FakeProbe& probe_;
};

JobStatus Done(JobState s, int code) {
  JobStatus st;
  st.state = s;
  st.exit_code = code;
  st.end_time = 1700000123;
  return st;
}

tessera::v1::LaunchJob Launch(uint64_t id) {
  tessera::v1::LaunchJob l;
  l.set_job_id(id);
  l.set_uid(geteuid());
  l.set_gid(getegid());
  l.set_script("#!/bin/sh\necho hi\n");
  return l;
}

struct Fixture {
  ScratchDir dir;
  Spool spool{dir.path() + "/spool"};
  FakeProbe probe;
  FakeControl control{probe};
  FakeClock clock;
  std::vector<std::string> logs;
  JobManager jobs{spool, control, probe, clock, [this](const std::string& m) { logs.push_back(m); }};
  Fixture() { REQUIRE(spool.Init().ok()); }
};

}  // namespace

TEST_CASE("status file round trip") {
  ScratchDir d;
  JobStatus st = Done(JobState::kTimeout, 0);
  st.exit_signal = 15;
  st.message = "time limit\nreached";
  std::string path = d.path() + "/status";
  REQUIRE(WriteStatusFile(path, st).ok());
  auto back = ReadStatusFile(path);
  REQUIRE(back.ok());
  CHECK(back->state == JobState::kTimeout);
  CHECK(back->exit_signal == 15);
  CHECK(back->end_time == 1700000123);
  CHECK(back->message == "time limit reached");  // newlines flattened
  CHECK(!std::filesystem::exists(path + ".tmp"));
  CHECK(ReadStatusFile(d.path() + "/nope").status().code() == Code::kNotFound);
}

TEST_CASE("status parsing rejects garbage with the location") {
  auto r = ParseJobStatus("state=COMPLETED\nexit_code=abc\n", "/x/status");
  REQUIRE(!r.ok());
  CHECK(r.status().message().find("/x/status:2") != std::string::npos);
  CHECK(!ParseJobStatus("exit_code=0\n", "s").ok());
  CHECK(!ParseJobStatus("state=WHATEVER\n", "s").ok());
  CHECK(ParseJobStatus("state=COMPLETED\nfuture_key=1\n", "s").ok());
}

TEST_CASE("spool scan classifies finished, running and lost jobs") {
  ScratchDir d;
  Spool spool(d.path());
  REQUIRE(spool.Init().ok());
  FakeProbe probe;
  for (uint64_t id : {1, 2, 3, 4}) REQUIRE(spool.CreateJobDir(id).ok());
  REQUIRE(WriteStatusFile(spool.StatusFile(1), Done(JobState::kCompleted, 0)).ok());
  WriteAll(spool.PidFile(2), "4242\n");
  probe.alive.insert({4242, spool.JobDir(2)});
  WriteAll(spool.PidFile(3), "4343\n");  // pid file, but that stepd is dead
  // job 4: no pid file, no status (noded died mid-launch)
  std::filesystem::create_directory(d.path() + "/job.notanumber");
  WriteAll(d.path() + "/noded.sock", "");

  auto scan = ScanSpool(spool, probe);
  REQUIRE(scan.ok());
  CHECK(scan->running == std::vector<uint64_t>{2});
  REQUIRE(scan->finished.size() == 1);
  CHECK(scan->finished.at(1).state == JobState::kCompleted);
  CHECK(scan->lost == std::vector<uint64_t>{3, 4});
}

TEST_CASE("a live pid that is not this job's stepd does not count as running") {
  ScratchDir d;
  Spool spool(d.path());
  REQUIRE(spool.CreateJobDir(9).ok());
  WriteAll(spool.PidFile(9), std::to_string(getpid()) + "\n");  // this test binary
  JobStatus st;
  CHECK(ClassifyJob(spool, ProcStepdProbe(), 9, &st) == JobDirState::kLost);
}

TEST_CASE("recovery reports finished jobs, reattaches running ones, fails lost ones") {
  Fixture f;
  for (uint64_t id : {1, 2, 3}) REQUIRE(f.spool.CreateJobDir(id).ok());
  REQUIRE(WriteStatusFile(f.spool.StatusFile(1), Done(JobState::kFailed, 3)).ok());
  WriteAll(f.spool.PidFile(2), "77\n");
  f.probe.alive.insert({77, f.spool.JobDir(2)});
  REQUIRE(f.jobs.Recover().ok());
  CHECK(f.jobs.Running() == std::vector<uint64_t>{2});
  auto unacked = f.jobs.Unacked();
  REQUIRE(unacked.size() == 2);
  CHECK(unacked[0].job_id() == 1);
  CHECK(unacked[0].exit_code() == 3);
  CHECK(unacked[1].job_id() == 3);
  CHECK(unacked[1].state() == tessera::v1::FAILED);
  CHECK(unacked[1].message() == "tessera-stepd for job 3 was lost");
  // the lost verdict is persisted: a second restart reports the same
  auto again = ReadStatusFile(f.spool.StatusFile(3));
  REQUIRE(again.ok());
  CHECK(again->message == "tessera-stepd for job 3 was lost");
}

TEST_CASE("launch writes the job directory, starts stepd and reports JobStarted once") {
  Fixture f;
  f.jobs.Launch(Launch(5));
  CHECK(f.control.starts == 1);
  CHECK(f.jobs.IsRunning(5));
  tessera::v1::LaunchJob stored;
  REQUIRE(stored.ParseFromString(ReadAll(f.spool.LaunchFile(5))));
  CHECK(stored.job_id() == 5);
  CHECK(ReadAll(f.spool.ScriptFile(5)) == "#!/bin/sh\necho hi\n");
  struct stat st {};
  REQUIRE(stat(f.spool.ScriptFile(5).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(st.st_uid == geteuid());
  auto out = f.jobs.TakeOutbox();
  REQUIRE(out.size() == 1);
  CHECK(out[0].started().job_id() == 5);
  CHECK(out[0].started().start_time() == f.clock.Now());

  f.jobs.Launch(Launch(5));  // duplicate: ignored
  CHECK(f.control.starts == 1);
  CHECK(f.jobs.TakeOutbox().empty());
}

TEST_CASE("a failed stepd start becomes JobFinished FAILED with the reason") {
  Fixture f;
  f.control.fail_with = "cannot execute tessera-stepd";
  f.jobs.Launch(Launch(6));
  CHECK(f.jobs.IsFinished(6));
  auto out = f.jobs.TakeOutbox();
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].has_finished());
  CHECK(out[0].finished().state() == tessera::v1::FAILED);
  CHECK(out[0].finished().message().find("cannot execute tessera-stepd") != std::string::npos);
  CHECK(ReadStatusFile(f.spool.StatusFile(6)).ok());
  f.jobs.Launch(Launch(6));  // still unacked: a re-sent launch is ignored
  CHECK(f.control.starts == 1);
}

TEST_CASE("poll turns a status file into JobFinished; ack deletes the job directory") {
  Fixture f;
  f.jobs.Launch(Launch(8));
  f.jobs.TakeOutbox();
  f.jobs.Poll();
  CHECK(f.jobs.TakeOutbox().empty());
  REQUIRE(WriteStatusFile(f.spool.StatusFile(8), Done(JobState::kCompleted, 0)).ok());
  f.jobs.Poll();
  auto out = f.jobs.TakeOutbox();
  REQUIRE(out.size() == 1);
  CHECK(out[0].finished().state() == tessera::v1::COMPLETED);
  CHECK(f.jobs.Running().empty());
  CHECK(f.jobs.Unacked().size() == 1);
  f.jobs.Ack(8);
  CHECK(f.jobs.Unacked().empty());
  CHECK(!std::filesystem::exists(f.spool.JobDir(8)));
}

TEST_CASE("a stepd that dies without a status file is reported lost") {
  Fixture f;
  f.jobs.Launch(Launch(9));
  f.jobs.TakeOutbox();
  f.probe.alive.clear();
  f.jobs.Poll();
  auto out = f.jobs.TakeOutbox();
  REQUIRE(out.size() == 1);
  CHECK(out[0].finished().state() == tessera::v1::FAILED);
  CHECK(out[0].finished().message() == "tessera-stepd for job 9 was lost");
}

TEST_CASE("signals: 0 cancels through stepd, others are forwarded, unknown jobs ignored") {
  Fixture f;
  f.jobs.Launch(Launch(10));
  f.jobs.Signal(10, 0);
  f.jobs.Signal(10, 10);
  f.jobs.Signal(99, 0);
  CHECK(f.control.cancels == std::vector<pid_t>{1010});
  REQUIRE(f.control.forwards.size() == 1);
  CHECK(f.control.forwards[0] == std::make_pair(pid_t{1010}, 10));
}
