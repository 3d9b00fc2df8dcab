#include <catch2/catch.hpp>
#include <future>

#include "common/env_block.h"
#include "ctld/jobs/job_manager.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {
JobRecord Draft(uint32_t uid) {
  JobRecord r;
  r.uid = uid;
  r.spec.name = "t";
  r.spec.task_groups.push_back({"main", 1, {1, 0, 0, ""}, 0, {}});
  r.partition = "cpu";
  return r;
}

uint64_t SubmitSync(JobManager& m, JobRecord d) {
  std::promise<Result<uint64_t>> p;
  m.Submit(std::move(d), [&](Result<uint64_t> r) { p.set_value(r); }, [](std::function<void()> f) { f(); });
  auto r = p.get_future().get();
  REQUIRE(r.ok());
  return *r;
}
}  // namespace

TEST_CASE("job ids are never reused, even after a restart") {
  TempDir d;
  FakeClock clock;
  std::string db = d.path + "/t.db";
  uint64_t last = 0;
  {
    auto s = Store::Open(db);
    JobManager m(s->get(), &clock);
    m.Recover(*(*s)->Load());
    for (int i = 0; i < 3; ++i) last = SubmitSync(m, Draft(1000));
    CHECK(last == 3);
  }
  // A restart resumes above the durable reservation, not at max(id)+1.
  auto s = Store::Open(db);
  auto rec = (*s)->Load();
  CHECK(rec->reserved_job_id == 1 + JobManager::kIdBlock);
  JobManager m(s->get(), &clock);
  m.Recover(*rec);
  uint64_t next = SubmitSync(m, Draft(1000));
  CHECK(next > last);
  CHECK(next == 1 + JobManager::kIdBlock);
}

namespace {
std::vector<uint64_t> ActiveIds(JobManager& m) {
  std::vector<uint64_t> ids;
  for (const JobRecord* r : m.active()) ids.push_back(r->job_id);
  return ids;
}
}  // namespace

TEST_CASE("active() holds the unfinished jobs in id order, through finish, requeue and restart") {
  TempDir d;
  FakeClock clock;
  std::string db = d.path + "/t.db";
  {
    auto s = Store::Open(db);
    JobManager m(s->get(), &clock);
    m.Recover(*(*s)->Load());
    for (int i = 0; i < 4; ++i) SubmitSync(m, Draft(1000));
    CHECK(ActiveIds(m) == std::vector<uint64_t>{1, 2, 3, 4});
    m.MarkStarted(2, {{"n1", 1, 0, {}, 1}}, nullptr);
    m.MarkFinished(2, JobState::kCompleted, 0, 0, 0, "", nullptr);
    bool sig = false;
    REQUIRE(m.Cancel(3, Caller{1000, 1000}, &sig).ok());
    CHECK(ActiveIds(m) == std::vector<uint64_t>{1, 4});
    CHECK(m.jobs().size() == 4);  // finished records stay until MinJobAge
    std::promise<Status> requeued;
    m.MarkRequeued(2, "requeued by test", [&](const Status& st) { requeued.set_value(st); });
    CHECK(ActiveIds(m) == std::vector<uint64_t>{1, 2, 4});  // a finished job back, in its place
    REQUIRE(requeued.get_future().get().ok());
    clock.Advance(1000);
    m.PurgeFinished(300);
    CHECK(ActiveIds(m) == std::vector<uint64_t>{1, 2, 4});
    CHECK(m.jobs().size() == 3);
  }
  auto s = Store::Open(db);
  JobManager m(s->get(), &clock);
  m.Recover(*(*s)->Load());
  CHECK(ActiveIds(m) == std::vector<uint64_t>{1, 2, 4});
}

TEST_CASE("only the owner or an admin may control a job") {
  TempDir d;
  FakeClock clock;
  auto s = Store::Open(d.path + "/t.db");
  JobManager m(s->get(), &clock);
  m.Recover(*(*s)->Load());
  uint64_t id = SubmitSync(m, Draft(1000));
  bool sig = false;
  Caller other{1001, 1001, false, false};
  Status st = m.Cancel(id, other, &sig);
  CHECK(st.code() == Code::kPermissionDenied);
  CHECK(m.Find(id)->State() == JobState::kPending);
  CHECK(m.Hold(id, other).code() == Code::kPermissionDenied);
  Caller owner{1000, 1000, false, false};
  REQUIRE(m.Hold(id, owner).ok());
  CHECK(m.Find(id)->reason == "JobHeldUser");
  REQUIRE(m.Release(id, owner).ok());
  Caller admin{0, 0, true, false};
  REQUIRE(m.Cancel(id, admin, &sig).ok());
  CHECK_FALSE(sig);
  CHECK(m.Find(id)->State() == JobState::kCancelled);
  CHECK(m.Cancel(9999, admin, &sig).code() == Code::kNotFound);
}

TEST_CASE("holding or releasing many jobs is one durable commit with a status per job") {
  TempDir d;
  FakeClock clock;
  auto s = Store::Open(d.path + "/t.db");
  JobManager m(s->get(), &clock);
  m.Recover(*(*s)->Load());
  std::vector<uint64_t> mine;
  for (int i = 0; i < 50; ++i) mine.push_back(SubmitSync(m, Draft(1000)));
  uint64_t theirs = SubmitSync(m, Draft(1001));
  Caller owner{1000, 1000, false, false};
  std::vector<uint64_t> ids = mine;
  ids.push_back(theirs);
  ids.push_back(99999);
  uint64_t before = (*s)->Stats().transactions;
  auto held = m.HoldMany(ids, owner, true);
  CHECK((*s)->Stats().transactions == before + 1);
  for (size_t i = 0; i < mine.size(); ++i) {
    CHECK(held[i].ok());
    CHECK(m.Find(mine[i])->held);
  }
  CHECK(held[mine.size()].code() == Code::kPermissionDenied);
  CHECK_FALSE(m.Find(theirs)->held);
  CHECK(held[mine.size() + 1].code() == Code::kNotFound);
  // Durable: a restart sees them held.
  auto rec = (*s)->Load();
  REQUIRE(rec.ok());
  size_t held_on_disk = 0;
  for (const auto& r : rec->active_jobs) held_on_disk += r.held;
  CHECK(held_on_disk == mine.size());
  auto released = m.HoldMany(mine, owner, false);
  for (const auto& st : released) CHECK(st.ok());
  CHECK(m.HoldMany({mine[0]}, owner, false)[0].code() == Code::kFailedPrecondition);
}

TEST_CASE("users may not raise their own time limit or set priority") {
  TempDir d;
  FakeClock clock;
  auto s = Store::Open(d.path + "/t.db");
  JobManager m(s->get(), &clock);
  m.Recover(*(*s)->Load());
  JobRecord dr = Draft(1000);
  dr.time_limit_s = 600;
  uint64_t id = SubmitSync(m, dr);
  Caller owner{1000, 1000, false, false};
  JobUpdate raise;
  raise.time_limit_s = 1200;
  CHECK(m.Update(id, owner, raise).code() == Code::kPermissionDenied);
  JobUpdate lower;
  lower.time_limit_s = 300;
  REQUIRE(m.Update(id, owner, lower).ok());
  CHECK(m.Find(id)->time_limit_s == 300);
  JobUpdate prio;
  prio.priority = 5;
  CHECK(m.Update(id, owner, prio).code() == Code::kPermissionDenied);
}

TEST_CASE("scripts and environments stay on disk, not in memory, until launch") {
  TempDir d;
  FakeClock clock;
  auto s = Store::Open(d.path + "/t.db");
  JobManager m(s->get(), &clock);
  m.Recover(*(*s)->Load());
  JobRecord dr = Draft(1000);
  dr.spec.script = "#!/bin/sh\necho hi\n";
  dr.spec.env_block = EnvBlockFromMap({{"HOME", "/home/x"}, {"PATH", "/bin"}});
  uint64_t id = SubmitSync(m, dr);
  CHECK(m.Find(id)->spec.script.empty());
  CHECK(m.Find(id)->spec.env_block.empty());
  auto p = (*s)->LoadPayload(id);
  REQUIRE(p.ok());
  CHECK(p->script == dr.spec.script);
  CHECK(EnvBlockToMap(p->env_block) == std::map<std::string, std::string>{{"HOME", "/home/x"}, {"PATH", "/bin"}});
  // Finishing the job archives it and drops the payload.
  Caller admin{0, 0, true, false};
  bool sig;
  REQUIRE(m.Cancel(id, admin, &sig).ok());
  Batch flush;
  REQUIRE((*s)->CommitSync(std::move(flush)).ok());
  CHECK((*s)->LoadPayload(id).status().code() == Code::kNotFound);
}
