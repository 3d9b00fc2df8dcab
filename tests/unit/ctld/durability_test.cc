// Hardening, part 3: every acknowledged change is durable first; a failed write changes nothing
// in memory and names its cause.
#include <catch2/catch.hpp>
#include <future>

#include "ctld/jobs/job_manager.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {
constexpr char kFull[] = "database or disk is full";

JobRecord Draft(uint32_t uid) {
  JobRecord r;
  r.uid = uid;
  r.spec.name = "t";
  r.spec.task_groups.push_back({"main", 1, {1, 0, 0, ""}, 0, {}});
  r.partition = "cpu";
  r.time_limit_s = 600;
  return r;
}

uint64_t SubmitSync(JobManager& m, JobRecord d) {
  std::promise<Result<uint64_t>> p;
  m.Submit(
      std::move(d), [&](Result<uint64_t> r) { p.set_value(r); },
      [](std::function<void()> f) { f(); });
  auto r = p.get_future().get();
  REQUIRE(r.ok());
  return *r;
}

void CheckFullDiskError(const Status& st) {
  CHECK(st.code() == Code::kUnavailable);
  CHECK(st.message() == std::string("state database write failed: ") + kFull);
}
}  // namespace

TEST_CASE("a failed transaction gives every batch in it the cause and leaves nothing on disk") {
  TempDir d;
  std::string db = d.path + "/t.db";
  {
    auto s = Store::Open(db);
    REQUIRE(s.ok());
    (*s)->FailWritesForTest(kFull);
    Batch b;
    b.SetMeta("job_id_reserved", "77");
    CheckFullDiskError((*s)->CommitSync(std::move(b)));
    (*s)->FailWritesForTest("");
    Batch ok;
    ok.SetMeta("other", "1");
    CHECK((*s)->CommitSync(std::move(ok)).ok());  // the store recovers once writes succeed
  }
  auto s = Store::Open(db);
  CHECK((*s)->Load()->reserved_job_id == 0);
}

TEST_CASE("hold, release, update, cancel and suspend fail on a failed write and change nothing") {
  TempDir d;
  FakeClock clock;
  std::string db = d.path + "/t.db";
  auto s = Store::Open(db);
  REQUIRE(s.ok());
  JobManager m(s->get(), &clock);
  m.Recover(*(*s)->Load());
  int events = 0;
  m.SetListener([&](const JobEvent&, const JobRecord&) { ++events; });
  uint64_t pending = SubmitSync(m, Draft(1000));
  uint64_t held = SubmitSync(m, Draft(1000));
  uint64_t running = SubmitSync(m, Draft(1000));
  REQUIRE(m.Hold(held, Caller{1000, 1000}).ok());
  std::promise<Status> started;
  m.MarkStarted(running, {{"n1", 1, 0, {}, 1}}, [&](const Status& st) { started.set_value(st); });
  REQUIRE(started.get_future().get().ok());
  int events_before = events;
  uint64_t seq_before = m.last_seq();

  (*s)->FailWritesForTest(kFull);
  Caller user{1000, 1000};
  Caller admin{0, 0, true};
  bool sig = true;
  CheckFullDiskError(m.Hold(pending, user));
  CheckFullDiskError(m.Release(held, user));
  JobUpdate u;
  u.time_limit_s = 60;
  CheckFullDiskError(m.Update(pending, user, u));
  CheckFullDiskError(m.Cancel(pending, user, &sig));
  CHECK_FALSE(sig);
  CheckFullDiskError(m.Cancel(running, user, &sig));
  CHECK_FALSE(sig);  // nothing to signal: the cancel was not acknowledged
  CheckFullDiskError(m.MarkSuspended(running, true));

  const JobRecord& p = *m.Find(pending);
  CHECK(p.State() == JobState::kPending);
  CHECK_FALSE(p.held);
  CHECK(p.time_limit_s == 600);
  CHECK(m.Find(held)->held);
  CHECK(m.Find(running)->State() == JobState::kRunning);
  CHECK_FALSE(m.Find(running)->cancel_requested);
  CHECK(events == events_before);  // WatchJobs saw nothing
  CHECK(m.last_seq() == seq_before);

  // Once writes succeed again the same changes go through, and they are what a restart sees.
  (*s)->FailWritesForTest("");
  REQUIRE(m.Hold(pending, user).ok());
  REQUIRE(m.Cancel(running, admin, &sig).ok());
  CHECK(sig);
  CHECK(events == events_before + 2);
  s->reset();
  auto again = Store::Open(db);
  REQUIRE(again.ok());
  auto rec = (*again)->Load();
  REQUIRE(rec.ok());
  std::map<uint64_t, JobRecord> byid;
  for (auto& r : rec->active_jobs) byid[r.job_id] = r;
  CHECK(byid[pending].held);
  CHECK(byid[held].held);
  CHECK(byid[running].cancel_requested);
}

TEST_CASE("CommitTransitions commits several jobs at once, a job twice in order") {
  TempDir d;
  FakeClock clock;
  auto s = Store::Open(d.path + "/t.db");
  JobManager m(s->get(), &clock);
  m.Recover(*(*s)->Load());
  uint64_t a = SubmitSync(m, Draft(1000));
  uint64_t b = SubmitSync(m, Draft(1000));
  REQUIRE(m.CommitTransitions(
               {{a, event::kHeld, "{}"}, {b, event::kHeld, "{}"}, {a, event::kReleased, "{}"}})
              .ok());
  CHECK_FALSE(m.Find(a)->held);
  CHECK(m.Find(b)->held);
  auto ev = (*s)->EventsForJob(a);
  REQUIRE(ev->size() == 3);
  CHECK(ev->at(1).type == "held");
  CHECK(ev->at(2).type == "released");
}

TEST_CASE("a requeue request is a durable event, cleared by the requeue") {
  JobRecord r = Draft(1000);
  r.state = static_cast<int>(JobState::kRunning);
  auto req = Apply(r, {1, 1, 10, event::kRequeueRequested, "{}"});
  REQUIRE(req.ok());
  CHECK(req->requeue_requested);
  auto back = Apply(*req, {2, 1, 20, event::kRequeued, "{\"reason\":\"Requeued by user\"}"});
  REQUIRE(back.ok());
  CHECK_FALSE(back->requeue_requested);
  CHECK(back->State() == JobState::kPending);
}

TEST_CASE("node states are stored and loaded") {
  TempDir d;
  std::string db = d.path + "/t.db";
  {
    auto s = Store::Open(db);
    Batch b;
    b.PutNodeState({"n1", true, false, "bad fan", 100});
    b.PutNodeState({"n2", false, true, "rma", 200});
    REQUIRE((*s)->CommitSync(std::move(b)).ok());
    Batch resume;
    resume.PutNodeState({"n2", false, false, "", 0});
    REQUIRE((*s)->CommitSync(std::move(resume)).ok());
  }
  auto s = Store::Open(db);
  auto rec = (*s)->Load();
  REQUIRE(rec->nodes.size() == 2);
  CHECK(rec->nodes[0].name == "n1");
  CHECK(rec->nodes[0].drain);
  CHECK(rec->nodes[0].reason == "bad fan");
  CHECK(rec->nodes[0].reason_time == 100);
  CHECK_FALSE(rec->nodes[1].drain);
  CHECK_FALSE(rec->nodes[1].down);
}

TEST_CASE(
    "a step is recorded durably before its id is handed out, and its end before it is "
    "acknowledged") {
  TempDir d;
  FakeClock clock;
  auto s = Store::Open(d.path + "/t.db");
  JobManager m(s->get(), &clock);
  m.Recover(*(*s)->Load());
  uint64_t id = SubmitSync(m, Draft(1000));
  std::promise<Status> started;
  m.MarkStarted(id, {{"n1", 1, 0, {}, 1}}, [&](const Status& st) { started.set_value(st); });
  REQUIRE(started.get_future().get().ok());
  StepRecord step;
  step.job_id = id;
  (*s)->FailWritesForTest(kFull);
  CheckFullDiskError(m.AddStep(id, step).status());
  CHECK(m.Find(id)->next_step_id == 0);  // the id is not used up
  step.state = static_cast<int>(JobState::kCompleted);
  CheckFullDiskError(m.FinishStepDurably(step));
  (*s)->FailWritesForTest("");
  auto first = m.AddStep(id, step);
  REQUIRE(first.ok());
  CHECK(*first == 0);
  CHECK(m.Find(id)->next_step_id == 1);
  auto rows = (*s)->StepsForJobs({id});
  REQUIRE(rows->size() == 1);
}
