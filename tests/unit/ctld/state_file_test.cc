// Hardening, part 3: start-up refusals of damaged, empty and foreign state databases; private
// state files; online backup.
#include "ctld/state/state_file.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "ctld/state/store.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {
int Mode(const std::string& path) {
  struct stat st;
  REQUIRE(stat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

void Sql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
}

// A state with `n` jobs (each with a 2 KiB script, so it spans many pages).
void MakeState(const std::string& path, int n) {
  auto s = Store::Open(path);
  REQUIRE(s.ok());
  Batch b;
  for (int i = 1; i <= n; ++i) {
    JobRecord r;
    r.job_id = static_cast<uint64_t>(i);
    r.spec.name = "job" + std::to_string(i);
    b.PutJob(r);
    b.PutPayload(r.job_id, {std::string(2048, 'x'), ""});
    b.AddEvent({static_cast<uint64_t>(i), r.job_id, 1, "submitted", "{}"});
  }
  REQUIRE((*s)->CommitSync(std::move(b)).ok());
}

int64_t CountJobs(const std::string& path) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM jobs", -1, &s, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(s) == SQLITE_ROW);
  int64_t n = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return n;
}

std::string Refusal(const std::string& path, StoreOptions opts = {}) {
  auto s = Store::Open(path, opts);
  REQUIRE_FALSE(s.ok());
  return s.status().message();
}
}  // namespace

TEST_CASE("an absent file becomes a new state, a zero-length one only with init_state") {
  TempDir d;
  std::string db = d.path + "/tessera.db";
  {
    auto s = Store::Open(db);
    REQUIRE(s.ok());
    CHECK((*s)->Load()->created);
  }
  {
    auto s = Store::Open(db);  // the second start: the same state, not a new one
    REQUIRE(s.ok());
    CHECK_FALSE((*s)->Load()->created);
  }
  std::string empty = d.path + "/empty.db";
  std::ofstream(empty).flush();
  std::string why = Refusal(empty);
  CHECK_THAT(why, Catch::Contains(empty));
  CHECK_THAT(why, Catch::Contains("exists but is empty (0 bytes)"));
  CHECK_THAT(why, Catch::Contains("--init-state"));
  auto s = Store::Open(empty, {.init_state = true});
  REQUIRE(s.ok());
  CHECK((*s)->Load()->created);
}

TEST_CASE("a foreign or table-less SQLite file, or not SQLite at all, is refused") {
  TempDir d;
  std::string foreign = d.path + "/foreign.db";
  Sql(foreign, "CREATE TABLE accounts(id INTEGER PRIMARY KEY, name TEXT);");
  std::string why = Refusal(foreign);
  CHECK_THAT(why, Catch::Contains(foreign));
  CHECK_THAT(why, Catch::Contains("not a Tessera state database"));
  CHECK_THAT(why, Catch::Contains("accounts"));
  CHECK(Refusal(foreign, {.init_state = true}) == why);  // never taken over
  // The refused file is left as it was (no WAL switch, no tables added).
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(foreign.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM sqlite_master", -1, &st, nullptr) ==
          SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  CHECK(sqlite3_column_int(st, 0) == 1);
  sqlite3_finalize(st);
  sqlite3_close(db);

  std::string tableless = d.path + "/tableless.db";
  Sql(tableless, "CREATE TABLE t(x); DROP TABLE t;");
  CHECK_THAT(Refusal(tableless), Catch::Contains("without any tables"));
  CHECK(Store::Open(tableless, {.init_state = true}).ok());

  std::string text = d.path + "/text.db";
  std::ofstream(text) << "these are not the pages you are looking for\n";
  why = Refusal(text);
  CHECK_THAT(why, Catch::Contains(text));
  CHECK_THAT(why, Catch::Contains("is not an SQLite database"));
}

TEST_CASE("a state database with pages overwritten in the middle is refused as damaged") {
  TempDir d;
  std::string db = d.path + "/tessera.db";
  MakeState(db, 300);
  struct stat st;
  REQUIRE(stat(db.c_str(), &st) == 0);
  REQUIRE(st.st_size > 40 * 4096);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(st.st_size / 2 / 4096 * 4096);
    std::string junk(4 * 4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  std::string why = Refusal(db);
  CHECK_THAT(why, Catch::Contains(db));
  CHECK_THAT(why, Catch::Contains("is damaged (SQLite quick_check:"));
  CHECK_THAT(why, Catch::Contains("Backup and restore"));
}

TEST_CASE("state files are private whatever the umask") {
  TempDir d;
  mode_t old = umask(0);
  std::string dir = d.path + "/state";
  bool tightened = true;
  REQUIRE(PrepareStateDir(dir, &tightened).ok());
  CHECK_FALSE(tightened);
  CHECK(Mode(dir) == 0700);
  std::string db = dir + "/tessera.db";
  {
    auto s = Store::Open(db);
    REQUIRE(s.ok());
    Batch b;
    b.SetMeta("k", "v");
    REQUIRE((*s)->CommitSync(std::move(b)).ok());
    CHECK(Mode(db) == 0600);
    CHECK(Mode(db + "-wal") == 0600);
    CHECK(Mode(db + "-shm") == 0600);
  }
  // An existing, too open directory and database (made before this version) are tightened.
  chmod(dir.c_str(), 0755);
  chmod(db.c_str(), 0644);
  REQUIRE(PrepareStateDir(dir, &tightened).ok());
  CHECK(tightened);
  CHECK(Mode(dir) == 0700);
  REQUIRE(Store::Open(db).ok());
  CHECK(Mode(db) == 0600);
  umask(old);
}

TEST_CASE("backup copies a consistent, private, checked snapshot and never overwrites") {
  TempDir d;
  std::string db = d.path + "/tessera.db";
  MakeState(db, 50);
  auto s = Store::Open(db);
  REQUIRE(s.ok());
  std::string dest = d.path + "/backup.db";
  auto b = (*s)->Backup(dest);
  REQUIRE(b.ok());
  CHECK(b->path == dest);
  CHECK(b->bytes > 50 * 2048);
  CHECK(Mode(dest) == 0600);
  CHECK(CountJobs(dest) == 50);
  CHECK((*s)->Backup(dest).status().code() == Code::kAlreadyExists);
  CHECK((*s)->Backup("relative.db").status().code() == Code::kInvalidArgument);
  CHECK((*s)->Backup(d.path + "/no/such/dir/b.db").status().code() == Code::kInvalidArgument);
  // The backup is a state ctld starts from.
  s->reset();
  auto restored = Store::Open(dest);
  REQUIRE(restored.ok());
  CHECK((*restored)->Load()->active_jobs.size() == 50);
}
