// Issue 16 §4 gaps (h16g): the durable grace deadline and suspended time in the job record, and
// tacct -D's rows of earlier runs rebuilt from a requeued job's events.
#include <catch2/catch.hpp>

#include "ctld/jobs/job_codec.h"
#include "ctld/preemption.h"
#include "ctld/rpc/accounting_runs.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {

JobRecord Running(uint64_t id) {
  JobRecord j;
  j.job_id = id;
  j.state = static_cast<int>(JobState::kRunning);
  j.start_time = 10;
  j.alloc = {{"a", 1, 100, {}, 1, {}, 0, 0}};
  return j;
}

JobRecord Step(const JobRecord& j, int64_t t, const char* type, const std::string& detail = "{}") {
  auto r = Apply(j, JobEvent{0, j.job_id, t, type, detail});
  INFO(type);
  REQUIRE(r.ok());
  return *r;
}

}  // namespace

TEST_CASE("a CANCEL or REQUEUE preemption leaves a durable grace deadline in the record") {
  JobRecord j = Running(5);
  JobRecord c = Step(j, 100, event::kPreempted, PreemptedDetail(9, "CANCEL", 30));
  CHECK(c.preempt_kill_at == 130);
  CHECK(c.State() == JobState::kRunning);
  // It survives the record's encoding (the jobs table) ...
  auto back = DecodeRecord(EncodeRecord(c));
  REQUIRE(back.ok());
  CHECK(back->preempt_kill_at == 130);
  // ... is "now" without a grace time, none for SUSPEND, and gone with a new run.
  CHECK(Step(j, 100, event::kPreempted, PreemptedDetail(9, "REQUEUE", 0)).preempt_kill_at == 100);
  CHECK(Step(j, 100, event::kPreempted, PreemptedDetail(9, "SUSPEND", 0)).preempt_kill_at == 0);
  JobRecord rq = Step(Step(c, 131, event::kRequeueRequested), 140, event::kRequeued,
                      R"({"reason":"Preempted"})");
  CHECK(rq.preempt_kill_at == 0);
}

TEST_CASE("suspended time is recorded per run and closed by resume or end") {
  JobRecord j = Running(6);
  JobRecord s = Step(j, 100, event::kSuspended);
  CHECK(s.suspend_time == 100);
  JobRecord r = Step(s, 160, event::kResumed);
  CHECK(r.suspended_s == 60);
  CHECK(r.suspend_time == 0);
  JobRecord s2 = Step(r, 200, event::kSuspended);
  // Cancelled while suspended: its open suspension counts until the end.
  JobRecord f = Step(s2, 0, event::kFinished,
                     FinishedDetail(JobState::kCancelled, 0, 15, 230, ""));
  CHECK(f.suspended_s == 90);
  CHECK(f.suspend_time == 0);
  // A new run starts from zero.
  JobRecord again = Step(r, 300, event::kStarted, StartedDetail(j.alloc, 300));
  CHECK(again.suspended_s == 0);
}

TEST_CASE("tacct -D rows: each earlier run of a requeued job, PREEMPTED or REQUEUED") {
  std::vector<NodeAlloc> a = {{"n1", 1, 100, {}, 1, {}, 0, 0}};
  std::vector<NodeAlloc> b = {{"n2", 1, 100, {}, 1, {}, 0, 0}};
  std::vector<JobEvent> ev = {
      {1, 7, 5, event::kSubmitted, "{}"},
      {2, 7, 10, event::kStarted, StartedDetail(a, 10)},
      {3, 7, 20, event::kPreempted, PreemptedDetail(8, "REQUEUE", 0)},
      {4, 7, 20, event::kRequeueRequested, "{}"},
      {5, 7, 25, event::kRequeued, R"({"reason":"Preempted"})"},
      {6, 7, 30, event::kStarted, StartedDetail(b, 30)},
      {7, 7, 40, event::kSuspended, "{}"},
      {8, 7, 50, event::kResumed, "{}"},
      {9, 7, 60, event::kRequeued, R"({"reason":"JobRequeued"})"},
      {10, 7, 70, event::kStarted, StartedDetail(a, 70)},
  };
  v1::JobInfo job;
  job.set_job_id(7);
  job.set_state(v1::RUNNING);
  job.set_start_time(70);
  job.set_requeue_count(2);
  auto runs = rpc::EarlierRuns(job, ev);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].state() == v1::PREEMPTED);
  CHECK(runs[0].start_time() == 10);
  CHECK(runs[0].end_time() == 25);
  CHECK(runs[0].nodelist() == "n1");
  CHECK(runs[1].state() == v1::REQUEUED);
  CHECK(runs[1].start_time() == 30);
  CHECK(runs[1].end_time() == 60);
  CHECK(runs[1].nodelist() == "n2");
  CHECK(runs[1].suspended_s() == 10);
  CHECK(runs[1].job_id() == 7);
}
