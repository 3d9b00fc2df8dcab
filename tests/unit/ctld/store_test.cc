#include <sqlite3.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <future>
#include <thread>

#include "ctld/state/store.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {
JobRecord Rec(uint64_t id, JobState st = JobState::kPending) {
  JobRecord r;
  r.job_id = id;
  r.spec.name = "job" + std::to_string(id);
  r.spec.task_groups.push_back({"main", 2, {1, 100, 0, ""}, 0, {}});
  r.state = static_cast<int>(st);
  r.uid = 1000;
  r.partition = "cpu";
  return r;
}
}  // namespace

TEST_CASE("store persists jobs, events and meta across reopen") {
  TempDir d;
  std::string db = d.path + "/t.db";
  {
    auto s = Store::Open(db);
    REQUIRE(s.ok());
    Batch b;
    b.PutJob(Rec(7));
    b.AddEvent({1, 7, 100, "submitted", "{}"});
    b.SetMeta("job_id_reserved", "1007");
    REQUIRE((*s)->CommitSync(std::move(b)).ok());
  }
  auto s = Store::Open(db);
  REQUIRE(s.ok());
  auto rec = (*s)->Load();
  REQUIRE(rec.ok());
  REQUIRE(rec->active_jobs.size() == 1);
  CHECK(rec->active_jobs[0].spec.name == "job7");
  CHECK(rec->active_jobs[0].spec.task_groups[0].count == 2);
  CHECK(rec->max_job_id == 7);
  CHECK(rec->reserved_job_id == 1007);
  CHECK(rec->max_event_seq == 1);
  auto ev = (*s)->EventsForJob(7);
  REQUIRE(ev.ok());
  REQUIRE(ev->size() == 1);
  CHECK(ev->at(0).type == "submitted");
}

TEST_CASE("archiving moves a finished job to accounting") {
  TempDir d;
  auto s = Store::Open(d.path + "/t.db");
  REQUIRE(s.ok());
  Batch b;
  b.PutJob(Rec(1));
  REQUIRE((*s)->CommitSync(std::move(b)).ok());
  JobRecord done = Rec(1, JobState::kCompleted);
  done.end_time = 500;
  Batch b2;
  b2.ArchiveJob(done);
  REQUIRE((*s)->CommitSync(std::move(b2)).ok());
  auto rec = (*s)->Load();
  CHECK(rec->active_jobs.empty());
  CHECK(rec->max_job_id == 1);
  AccountingFilter f;
  f.uids = {1000};
  auto acct = (*s)->QueryAccounting(f);
  REQUIRE(acct.ok());
  REQUIRE(acct->size() == 1);
  CHECK(acct->at(0).State() == JobState::kCompleted);
  f.uids = {1001};
  CHECK((*s)->QueryAccounting(f)->empty());
}

TEST_CASE("concurrent commits share transactions (group commit)") {
  TempDir d;
  auto s = Store::Open(d.path + "/t.db");
  REQUIRE(s.ok());
  constexpr int kN = 400;
  std::atomic<int> ok{0};
  std::vector<std::promise<void>> done(kN);
  for (int i = 0; i < kN; ++i) {
    Batch b;
    b.PutJob(Rec(static_cast<uint64_t>(i + 1)));
    (*s)->Commit(std::move(b), [&, i](const Status& st) {
      if (st.ok()) ok++;
      done[i].set_value();
    });
  }
  for (auto& p : done) p.get_future().wait();
  CHECK(ok == kN);
  auto stats = (*s)->Stats();
  CHECK(stats.batches == kN);
  CHECK(stats.transactions < kN);  // batches were grouped
  CHECK((*s)->Load()->active_jobs.size() == kN);
}

TEST_CASE("a database from a newer tessera-ctld is refused") {
  TempDir d;
  std::string db = d.path + "/t.db";
  { REQUIRE(Store::Open(db).ok()); }
  sqlite3* h;
  REQUIRE(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
  REQUIRE(sqlite3_exec(h, "PRAGMA user_version=99", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(h);
  auto s = Store::Open(db);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().message().find("newer") != std::string::npos);
}
