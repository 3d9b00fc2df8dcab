#pragma once
// Durable controller state in one SQLite database (WAL mode, synchronous=FULL).
//
// Contract:
//  - Open() checks the file first (state_file.h): an absent file (or, with init_state, an empty
//    one) becomes a new state; an existing file must be writable, pass SQLite's quick_check and
//    hold a Tessera schema, else Open() refuses with a message naming the file and what to do.
//    It then migrates the schema (numbered migrations, PRAGMA user_version), refuses a database
//    written by a newer tessera-ctld, and leaves the database, -wal and -shm files mode 0600.
//  - Commit() queues a Batch; a single writer thread commits every queued batch in ONE
//    transaction (group commit: concurrent submissions share one fsync) and then calls each
//    batch's callback with the outcome, in queue order, on the writer thread. A callback with OK
//    means the batch is durable. A failed transaction is rolled back (nothing of it is on disk),
//    logged, and every batch in it gets Unavailable("state database write failed: <SQLite's
//    reason>"), e.g. "... database or disk is full".
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

inline constexpr int kSchemaVersion = 10;

// The persisted part of a node's state (migration 4): set by UpdateNode, loaded at start.
// A row with neither drain nor down set means "as the node reports" (resumed).
struct NodeStateRow {
  std::string name;
  bool drain = false;
  bool down = false;  // set DOWN by an administrator, or "Not responding" by the controller (issue 21)
  std::string reason;
  int64_t reason_time = 0;
  int64_t reason_uid = -1;  // who set the reason (migration 9, issue 19: sinfo -R USER); -1 unknown
};

// A drained GPU (migration 5): present = held out of scheduling until an administrator resumes
// it (the row is then deleted). origin: "admin" (tcontrol update node N Gpu=I State=DRAIN) or
// "node" (the node reported it failed: XID, lost device, bad gres.conf line).
struct GpuDrainRow {
  std::string node;
  uint32_t gpu = 0;
  std::string reason;
  int64_t reason_time = 0;
  std::string origin;
  int64_t reason_uid = -1;  // who drained it (migration 10, issue 21); -1 unknown
};

// One row of the association store (migration 6; ctld/accounts/assoc_codec.h).
struct AssocRow {
  std::string kind;    // account | user | assoc | qos
  std::string name;
  std::string record;  // JSON
};

// Fair-share usage of one association (migration 7, issue 16 §3; ctld/usage.h): decayed
// billing-seconds as of meta "usage_last_charge".
struct UsageRow {
  std::string account;
  std::string user;
  double usage = 0;
};

struct StoreOptions {
  // Take an existing zero-length (or table-less SQLite) file as a new, empty state. Without
  // it such a file is refused: only an absent file becomes a new state implicitly.
  bool init_state = false;
};

struct BackupInfo {
  std::string path;
  int64_t pages = 0;
  int64_t bytes = 0;
};

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
  // An administrator's node state (drain/down and reason): what must survive a restart.
  void PutNodeState(const NodeStateRow& n);
  // A drained GPU (insert or replace), or its resume (delete).
  void PutGpuDrain(const GpuDrainRow& g);
  void DeleteGpuDrain(const std::string& node, uint32_t gpu);
  // The association store (acct helper, issue 16 §1): insert or replace a row, or delete one.
  void PutAssoc(const AssocRow& row);
  void DeleteAssoc(const std::string& kind, const std::string& name);
  // Fair share (issue 16 §3): an association's usage (insert or replace).
  void PutUsage(const UsageRow& u);
  // Reservations (issue 17 §1): insert or replace one (record = JSON), or delete it.
  void PutReservation(const std::string& name, std::string record);
  void DeleteReservation(const std::string& name);
  // Adds the writes of `other` after these.
  void Append(Batch other);
  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }

 private:
  friend class Store;
  enum class Kind {
    kPutJob, kArchiveJob, kEvent, kMeta, kPayload, kStep, kNode, kGpuDrain, kGpuResume,
    kAssocPut, kAssocDelete,  // acct helper
    kUsage,  // fair share (issue 16 §3)
    kResvPut, kResvDelete  // reservations (issue 17 §1)
  };
  struct Op {
    Kind kind;
    uint64_t id = 0;
    std::string a, b;  // record JSON / event type+detail / meta key+value
    int64_t n1 = 0, n2 = 0;
    std::shared_ptr<const JobRecord> rec;       // for archive (indexed columns)
    std::shared_ptr<const StepRecord> step;
    std::shared_ptr<const JobPayload> payload;  // kPayload
    std::string c;                              // kGpuDrain: origin
  };
  std::vector<Op> ops_;
};

struct Recovered {
  std::vector<JobRecord> active_jobs;
  uint64_t max_job_id = 0;        // over active and archived jobs
  uint64_t reserved_job_id = 0;   // meta "job_id_reserved"
  uint64_t max_event_seq = 0;
  std::vector<NodeStateRow> nodes;
  std::vector<GpuDrainRow> gpu_drains;
  std::vector<AssocRow> assoc_rows;  // migration 6, in (kind, name) order
  std::string assoc_config_seen;     // meta "assoc_config_seen" (ctld/accounts), "" = none
  // Fair share (issue 16 §3): usage rows and meta usage_last_charge / usage_last_reset (0: none).
  std::vector<UsageRow> usage;
  int64_t usage_last_charge = 0, usage_last_reset = 0;
  // Reservations (migration 8, issue 17 §1): (name, JSON record), in name order.
  std::vector<std::pair<std::string, std::string>> reservations;
  bool created = false;  // Open() made a new state (absent file, or init_state)
};

struct AccountingFilter {
  std::vector<uint64_t> job_ids;
  std::vector<uint32_t> uids;
  int64_t start_after = 0;   // jobs that ended (or started) after
  int64_t end_before = 0;
  std::vector<int> states;
  size_t limit = 100000;
  // Issue 19 (sacct -j ARRAY_ID): a job id also names the elements of the array it heads,
  // whose ids follow it (at most array_span of them); 0 = ids name jobs only.
  uint32_t array_span = 0;
};

struct StoreStats {
  uint64_t transactions = 0;
  uint64_t batches = 0;
  uint64_t queued = 0;  // batches waiting for the writer now (sdiag's DBD agent queue size)
};

class Store {
 public:
  static Result<std::unique_ptr<Store>> Open(const std::string& path, StoreOptions opts = {});
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
  // Issue 20 §3: called on the writer thread after each transaction with its time (BEGIN to
  // COMMIT/ROLLBACK, microseconds) and the batches in it. Set before the first Commit.
  void SetCommitObserver(std::function<void(int64_t us, size_t batches)> f) { on_commit_ = std::move(f); }
  const std::string& path() const { return path_; }
  // Online backup (SQLite's backup API, state/backup.cc) of one consistent snapshot to `dest`,
  // an absolute path that must not exist yet: every change acknowledged before the call is in
  // it. Written to dest + ".tmp" (mode 0600), checked with integrity_check, fsynced, renamed.
  // Safe from any thread; commits go on meanwhile.
  Result<BackupInfo> Backup(const std::string& dest);
  // Tests: while `message` is not empty every transaction fails (and rolls back) as if SQLite
  // had answered it; the callbacks get the same status as for a real failure.
  void FailWritesForTest(std::string message);

 private:
  Store(sqlite3* w, sqlite3* r, std::string path, bool created);
  void WriterLoop();
  Status ApplyBatch(const Batch& b);
  Status LoadUsage(Recovered* out);  // fair share (issue 16 §3), under read_mu_
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
  bool created_ = false;
  std::string fail_writes_;  // FailWritesForTest
  StoreStats stats_;
  std::function<void(int64_t, size_t)> on_commit_;
  std::thread writer_;
};

}  // namespace tessera::ctld
