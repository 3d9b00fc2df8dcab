// Hardening issue, part 5: the controller's input checks (ctld/submit_checks.h), the reason of a
// job that failed for a stated cause, and negative nice for operators at update.
#include <catch2/catch.hpp>

#include <future>
#include <set>

#include "common/env_block.h"
#include "ctld/jobs/job_codec.h"
#include "ctld/jobs/job_manager.h"
#include "ctld/submit_checks.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {

constexpr int64_t kNow = 1'700'000'000;
const Caller kUser{1000, 1000, false, false};
const Caller kOperator{1001, 1001, false, true};
const Caller kAdmin{0, 0, true, false};

JobSpec Spec() {
  JobSpec s;
  s.name = "train";
  s.workdir = "/home/alice";
  s.argv = {"/home/alice/train.sh"};
  s.task_groups.push_back({"main", 1, {1, 0, 0, ""}, 0, {}});
  return s;
}

}  // namespace

TEST_CASE("a negative nice at submit is for operators and administrators only") {
  JobSpec s = Spec();
  s.nice = -100;
  Status st = CheckSubmitInput(s, {}, kUser, kNow);
  CHECK(st.code() == Code::kPermissionDenied);
  CHECK(st.message() ==
        "Access/permission denied: only operators and administrators may set a negative nice "
        "value (--nice=-100)");
  CHECK(CheckSubmitInput(s, {}, kOperator, kNow).ok());
  CHECK(CheckSubmitInput(s, {}, kAdmin, kNow).ok());
  s.nice = 100;
  CHECK(CheckSubmitInput(s, {}, kUser, kNow).ok());
  s.nice = -2147483647;
  CHECK(CheckSubmitInput(s, {}, kAdmin, kNow).code() == Code::kInvalidArgument);
}

TEST_CASE("a negative nice at update likewise, for the same people") {
  JobUpdate u;
  u.set_nice = true;
  u.nice = -5;
  CHECK(CheckUpdateInput(u, kUser).code() == Code::kPermissionDenied);
  CHECK(CheckUpdateInput(u, kOperator).ok());
  TempDir d;
  FakeClock clock;
  auto store = Store::Open(d.path + "/t.db");
  JobManager m(store->get(), &clock);
  m.Recover(*(*store)->Load());
  JobRecord dr;
  dr.uid = 1000;
  dr.spec = Spec();
  dr.partition = "cpu";
  std::promise<Result<uint64_t>> p;
  m.Submit(std::move(dr), [&](Result<uint64_t> r) { p.set_value(r); },
           [](std::function<void()> f) { f(); });
  auto id = p.get_future().get();
  REQUIRE(id.ok());
  CHECK(m.Update(*id, kUser, u).code() == Code::kPermissionDenied);
  REQUIRE(m.Update(*id, kOperator, u).ok());  // was refused to operators before
  CHECK(m.Find(*id)->spec.nice == -5);
}

TEST_CASE("text other users see may not hold control characters") {
  struct Case {
    void (*set)(JobSpec&);
    const char* message;
  };
  const Case cases[] = {
      {[](JobSpec& s) { s.name = "x\x1b[2J"; },
       "job name (--job-name) contains a control character (ESC, 0x1b) at position 2"},
      {[](JobSpec& s) { s.comment = "ok\nFAKE LINE"; },
       "comment (--comment) contains a control character (newline, 0x0a) at position 3"},
      {[](JobSpec& s) { s.account = "acct\r"; },
       "account (--account) contains a control character (carriage return, 0x0d) at position 5"},
      {[](JobSpec& s) { s.workdir = "/tmp/a\x07"; },
       "working directory (--chdir) contains a control character (control character, 0x07) at "
       "position 7"},
      {[](JobSpec& s) { s.stdout_pattern = "/tmp/\xc2\x9bo"; },
       "output file (--output) contains a control character (U+009B) at position 6"},
      {[](JobSpec& s) { s.qos = "q\x7f"; },
       "QOS (--qos) contains a control character (DEL, 0x7f) at position 2"},
  };
  for (const auto& c : cases) {
    JobSpec s = Spec();
    c.set(s);
    Status st = CheckSubmitInput(s, {}, kUser, kNow);
    CHECK(st.code() == Code::kInvalidArgument);
    CHECK(st.message().find(c.message) == 0);
  }
  JobSpec utf8 = Spec();
  utf8.name = "r\xc3\xa9sum\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac";  // UTF-8 names stay allowed
  utf8.comment = "tabs are not, but spaces are";
  CHECK(CheckSubmitInput(utf8, {}, kUser, kNow).ok());
  JobUpdate u;
  u.set_comment = true;
  u.comment = "\x1b]0;owned\x07";
  CHECK(CheckUpdateInput(u, kUser).message().find("Comment contains a control character (ESC") == 0);
}

TEST_CASE("times and time limits lie within a sane range, at submit and update") {
  JobSpec s = Spec();
  s.begin_time = kNow + 99999999999LL * 86400;  // --begin=now+99999999999days
  CHECK(CheckSubmitInput(s, {}, kUser, kNow).message().find(
            "--begin: time is more than 100 years from now") == 0);
  s.begin_time = kNow + 86400;
  CHECK(CheckSubmitInput(s, {}, kUser, kNow).ok());
  CHECK(CheckSubmitInput(s, {kNow + 200LL * 365 * 86400, 0}, kUser, kNow).message().find(
            "--deadline") == 0);
  s.time_limit_s = 1000LL * 365 * 86400;
  CHECK(CheckSubmitInput(s, {}, kUser, kNow).message().find("--time: time limit of") == 0);
  JobUpdate u;
  u.time_limit_s = 1000LL * 365 * 86400;
  CHECK(CheckUpdateInput(u, kAdmin).message().find("TimeLimit: time limit of") == 0);
  u.time_limit_s = -1;
  CHECK(CheckUpdateInput(u, kAdmin).ok());
}

TEST_CASE("an environment too large for exec is refused at submit") {
  JobSpec s = Spec();
  std::string env;
  for (int i = 0; i < 300000; ++i) EnvBlockSet(&env, "V" + std::to_string(i), "1");
  s.env_block = env;
  Status st = CheckSubmitInput(s, {}, kUser, kNow);
  CHECK(st.code() == Code::kInvalidArgument);
  CHECK(st.message().find("environment and arguments too large to start the job") == 0);
}

TEST_CASE("a dependency on a job the controller does not know is a dependency problem") {
  std::set<uint64_t> known = {7, 8};
  auto is_known = [&](uint64_t id) { return known.count(id) > 0; };
  CHECK(CheckDependencyTargets("", is_known).ok());
  CHECK(CheckDependencyTargets("afterok:7:8", is_known).ok());
  CHECK(CheckDependencyTargets("singleton", is_known).ok());
  for (const char* type : {"after", "afterok", "afternotok", "afterany"}) {
    Status st = CheckDependencyTargets(std::string(type) + ":7:999999999", is_known);
    CHECK(st.code() == Code::kInvalidArgument);
    CHECK(st.message() == "Job dependency problem: job 999999999 (" + std::string(type) +
                              ") is not known to the controller (never submitted, or ended and "
                              "purged after MinJobAge)");
  }
  CHECK_FALSE(CheckDependencyTargets("afterany:7?afterok:12", is_known).ok());
}

TEST_CASE("a job that failed for a stated cause shows the cause as its reason") {
  JobRecord r;
  r.job_id = 5;
  r.state = static_cast<int>(JobState::kRunning);
  r.reason = "None";
  JobEvent e{1, 5, kNow, event::kFinished,
             FinishedDetail(JobState::kFailed, 1, 0, kNow,
                            "couldn't chdir to `/nonexistent': No such file or directory")};
  auto failed = Apply(r, e);
  REQUIRE(failed.ok());
  CHECK(failed->reason == "couldn't chdir to `/nonexistent': No such file or directory");
  e.detail = FinishedDetail(JobState::kFailed, 3, 0, kNow, "");  // a plain non-zero exit: Slurm's
  CHECK(Apply(r, e)->reason == "NonZeroExitCode");  // reason (issue 19)
  e.detail = FinishedDetail(JobState::kCompleted, 0, 0, kNow, "");
  CHECK(Apply(r, e)->reason == "None");
}
