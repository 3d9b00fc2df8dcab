#pragma once
// Durable controller state in one SQLite database (WAL mode, synchronous=FULL).
//
// Contract:
//  - Open() creates or migrates the schema (numbered migrations, PRAGMA user_version) and
//    refuses a database written by a newer tessera-ctld.
//  - Commit() queues a Batch; a single writer thread commits every queued batch in ONE
//    transaction (group commit: concurrent submissions share one fsync) and then calls each
//    batch's callback with the outcome, in queue order, on the writer thread. A callback with OK
//    means the batch is durable.
//  - Batches are applied in the order Commit() was called.
//  - Reads (accounting, events) use a separate connection and are safe from any thread.
#include <sqlite3.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "ctld/jobs/job.h"

namespace tessera::ctld {

inline constexpr int kSchemaVersion = 3;

// Writes that must become durable together.
class Batch {
 public:
  void PutJob(const JobRecord& r);        // insert or replace the active job row
  void PutJob(const JobRecord& r, std::string json);  // same, json = EncodeRecord(r) already made
  void ArchiveJob(const JobRecord& r);    // move a finished job to accounting (drops its payload)
  void PutPayload(uint64_t job_id, JobPayload p);  // encoded on the writer thread
  void PutStep(const StepRecord& s);
  void AddEvent(const JobEvent& e);
  void SetMeta(const std::string& key, const std::string& value);
  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }

 private:
  friend class Store;
  enum class Kind { kPutJob, kArchiveJob, kEvent, kMeta, kPayload, kStep };
  struct Op {
    Kind kind;
    uint64_t id = 0;
    std::string a, b;  // record JSON / event type+detail / meta key+value
    int64_t n1 = 0, n2 = 0;
    std::shared_ptr<const JobRecord> rec;       // for archive (indexed columns)
    std::shared_ptr<const StepRecord> step;
    std::shared_ptr<const JobPayload> payload;  // kPayload
  };
  std::vector<Op> ops_;
};

struct Recovered {
  std::vector<JobRecord> active_jobs;
  uint64_t max_job_id = 0;        // over active and archived jobs
  uint64_t reserved_job_id = 0;   // meta "job_id_reserved"
  uint64_t max_event_seq = 0;
};

struct AccountingFilter {
  std::vector<uint64_t> job_ids;
  std::vector<uint32_t> uids;
  int64_t start_after = 0;   // jobs that ended (or started) after
  int64_t end_before = 0;
  std::vector<int> states;
  size_t limit = 100000;
};

struct StoreStats {
  uint64_t transactions = 0;
  uint64_t batches = 0;
};

class Store {
 public:
  static Result<std::unique_ptr<Store>> Open(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  Result<Recovered> Load();
  void Commit(Batch batch, std::function<void(const Status&)> done);
  Status CommitSync(Batch batch);  // blocks until durable

  Result<std::vector<JobRecord>> QueryAccounting(const AccountingFilter& f);
  // Archived jobs that ended at or after `since` and are not active again (a requeued finished
  // job): what a restarted controller keeps listing until MinJobAge has passed.
  Result<std::vector<JobRecord>> RecentlyFinished(int64_t since);
  Result<std::vector<JobEvent>> EventsForJob(uint64_t job_id);
  // The script and environment of an active job. NotFound once the job is archived.
  Result<JobPayload> LoadPayload(uint64_t job_id);
  Result<std::vector<StepRecord>> StepsForJobs(const std::vector<uint64_t>& job_ids);
  Result<std::vector<JobEvent>> EventsSince(uint64_t seq, size_t limit);
  StoreStats Stats() const;

 private:
  Store(sqlite3* w, sqlite3* r, std::string path);
  void WriterLoop();
  Status ApplyBatch(const Batch& b);
  Status Exec(const char* sql);
  // Prepared statements, keyed by their (static) SQL text: of the writer connection (writer
  // thread only) and of the reader (under read_mu_).
  sqlite3_stmt* Cached(const char* sql) { return Prepared(wdb_, &stmts_, sql); }
  sqlite3_stmt* CachedRead(const char* sql) { return Prepared(rdb_, &read_stmts_, sql); }
  using StmtCache = std::map<const char*, sqlite3_stmt*>;
  static sqlite3_stmt* Prepared(sqlite3* db, StmtCache* cache, const char* sql);

  sqlite3* wdb_;
  StmtCache stmts_;
  sqlite3* rdb_;
  StmtCache read_stmts_;
  std::string path_;
  std::mutex read_mu_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  struct Pending {
    Batch batch;
    std::function<void(const Status&)> done;
  };
  std::deque<Pending> queue_;
  bool stop_ = false;
  StoreStats stats_;
  std::thread writer_;
};

}  // namespace tessera::ctld
