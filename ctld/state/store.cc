#include "ctld/state/store.h"

#include <chrono>
#include <algorithm>
#include <future>

#include "common/env_block.h"
#include "ctld/jobs/job_codec.h"
#include "ctld/log.h"
#include "ctld/state/migrations.h"
#include "ctld/state/state_file.h"

namespace tessera::ctld {
namespace {

// RAII prepared statement.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) s_ = nullptr;
  }
  // Wraps a cached statement: reset (not finalized) when done.
  Stmt(sqlite3* db, sqlite3_stmt* cached) : db_(db), s_(cached), owned_(false) {}
  ~Stmt() {
    if (owned_) {
      sqlite3_finalize(s_);
    } else if (s_) {
      sqlite3_reset(s_);
      sqlite3_clear_bindings(s_);
    }
  }
  bool ok() const { return s_ != nullptr; }
  Stmt& Bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); return *this; }
  Stmt& BindBlob(int i, const std::string& v) {
    sqlite3_bind_blob(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
    return *this;
  }
  Stmt& Bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  int Step() { return sqlite3_step(s_); }
  sqlite3_stmt* raw() const { return s_; }
  int64_t Int(int col) { return sqlite3_column_int64(s_, col); }
  std::string Text(int col) {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(s_, col))) : std::string();
  }
  Status Error(const std::string& what) const {
    return Internal(what + ": " + sqlite3_errmsg(db_));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  bool owned_ = true;
};

// The job records of every row left in `s` (column 0: the record's JSON).
Result<std::vector<JobRecord>> DecodeRecords(Stmt& s) {
  std::vector<JobRecord> out;
  while (s.Step() == SQLITE_ROW) {
    auto r = DecodeRecord(s.Text(0));
    if (!r.ok()) return r.status();
    out.push_back(std::move(*r));
  }
  return out;
}

Status StepDone(Stmt& s, const std::string& what) {
  if (!s.ok() || s.Step() != SQLITE_DONE) return s.Error(what);
  return Status::Ok();
}

std::string InList(size_t n) {
  std::string s = "(";
  for (size_t i = 0; i < n; ++i) s += i ? ",?" : "?";
  return s + ")";
}

}  // namespace

void Batch::PutJob(const JobRecord& r) { PutJob(r, EncodeRecord(r)); }

void Batch::PutJob(const JobRecord& r, std::string json) {
  ops_.push_back({Kind::kPutJob, r.job_id, std::move(json), "", r.state, 0, {}, {}, {}});
}

void Batch::ArchiveJob(const JobRecord& r) {
  ops_.push_back({Kind::kArchiveJob, r.job_id, EncodeRecord(r), "", r.state, 0,
                  std::make_shared<const JobRecord>(r), {}, {}});
}

void Batch::PutPayload(uint64_t job_id, JobPayload p) {
  ops_.push_back({Kind::kPayload, job_id, "", "", 0, 0, {}, {},
                  std::make_shared<const JobPayload>(std::move(p))});
}

void Batch::PutStep(const StepRecord& s) {
  ops_.push_back({Kind::kStep, s.job_id, "", "", 0, 0, {}, std::make_shared<const StepRecord>(s), {}});
}

void Batch::AddEvent(const JobEvent& e) {
  ops_.push_back({Kind::kEvent, e.job_id, e.type, e.detail, static_cast<int64_t>(e.seq), e.time, {}, {}, {}});
}

void Batch::PutNodeState(const NodeStateRow& n) {
  // id: the reason's uid + 1 (0 = unknown).
  ops_.push_back({Kind::kNode, static_cast<uint64_t>(n.reason_uid + 1), n.name, n.reason,
                  (n.drain ? 1 : 0) | (n.down ? 2 : 0), n.reason_time, {}, {}, {}});
}

void Batch::PutGpuDrain(const GpuDrainRow& g) {
  // n2: the uid + 1 (0 = unknown).
  ops_.push_back({Kind::kGpuDrain, g.gpu, g.node, g.reason, g.reason_time, g.reason_uid + 1, {}, {}, {}});
  ops_.back().c = g.origin;
}

void Batch::DeleteGpuDrain(const std::string& node, uint32_t gpu) {
  ops_.push_back({Kind::kGpuResume, gpu, node, "", 0, 0, {}, {}, {}});
}

void Batch::PutAssoc(const AssocRow& row) {
  ops_.push_back({Kind::kAssocPut, 0, row.kind, row.name, 0, 0, {}, {}, {}});
  ops_.back().c = row.record;
}

void Batch::DeleteAssoc(const std::string& kind, const std::string& name) {
  ops_.push_back({Kind::kAssocDelete, 0, kind, name, 0, 0, {}, {}, {}});
}

void Batch::PutReservation(const std::string& name, std::string record) {
  ops_.push_back({Kind::kResvPut, 0, name, std::move(record), 0, 0, {}, {}, {}});
}

void Batch::DeleteReservation(const std::string& name) {
  ops_.push_back({Kind::kResvDelete, 0, name, "", 0, 0, {}, {}, {}});
}

void Batch::PutUsage(const UsageRow& u) {
  ops_.push_back({Kind::kUsage, 0, u.account, u.user, 0, 0, {}, {}, {}});
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", u.usage);
  ops_.back().c = buf;
}

void Batch::Append(Batch other) {
  for (auto& op : other.ops_) ops_.push_back(std::move(op));
}

void Batch::SetMeta(const std::string& key, const std::string& value) {
  ops_.push_back({Kind::kMeta, 0, key, value, 0, 0, {}, {}, {}});
}

namespace {

// Runs `sql` on `db`; an error names the file.
Status ExecOn(sqlite3* db, const std::string& path, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    return Internal(path + ": " + m);
  }
  return Status::Ok();
}

// Brings the schema of `w` to the newest migration; refuses a newer one.
Status Migrate(sqlite3* w, const std::string& path) {
  int version = 0;
  {
    Stmt s(w, "PRAGMA user_version");
    if (s.ok() && s.Step() == SQLITE_ROW) version = static_cast<int>(s.Int(0));
  }
  const auto& migs = Migrations();
  if (version > static_cast<int>(migs.size()))
    return FailedPrecondition(path + " has schema version " + std::to_string(version) +
                              ", newer than this tessera-ctld supports (" +
                              std::to_string(migs.size()) + "); refusing to start");
  for (int v = version; v < static_cast<int>(migs.size()); ++v) {
    std::string sql = std::string("BEGIN;") + migs[v] + "PRAGMA user_version=" + std::to_string(v + 1) + "; COMMIT;";
    Status st = ExecOn(w, path, sql.c_str());
    if (!st.ok()) {
      (void)ExecOn(w, path, "ROLLBACK;");
      return st;
    }
  }
  // An upgrade says so in the log (docs/admin-guide.md "Upgrades"); a new database does not.
  if (version > 0 && version < static_cast<int>(migs.size()))
    Log("state database " + path + " migrated from schema version " + std::to_string(version) +
        " to " + std::to_string(migs.size()));
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, StoreOptions opts) {
  bool is_new = false;
  TESSERA_RETURN_IF_ERROR(CheckBeforeOpen(path, opts.init_state, &is_new));
  sqlite3* w = nullptr;
  if (sqlite3_open_v2(path.c_str(), &w, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    std::string msg = w ? sqlite3_errmsg(w) : "out of memory";
    sqlite3_close(w);
    return Unavailable("cannot open state database " + path + ": " + msg);
  }
  sqlite3_busy_timeout(w, 5000);
  // Checked before any PRAGMA writes: a damaged or foreign file is left as it was found.
  Status st = is_new ? Status::Ok() : CheckAfterOpen(w, path, opts.init_state);
  // cache_size: 256 KiB of page cache instead of SQLite's 2 MiB default (inserts touch only the
  // right edge of the tables; controller memory per job, issue #6).
  if (st.ok())
    st = ExecOn(w, path, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; "
                         "PRAGMA cache_size=-256;");
  if (st.ok()) st = Migrate(w, path);
  if (st.ok()) st = MakePrivate(path);
  if (!st.ok()) {
    sqlite3_close(w);
    return st;
  }
  sqlite3* r = nullptr;
  if (sqlite3_open_v2(path.c_str(), &r, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    sqlite3_close(r);
    sqlite3_close(w);
    return Unavailable("cannot open state database for reading: " + path);
  }
  sqlite3_busy_timeout(r, 5000);
  return std::unique_ptr<Store>(new Store(w, r, path, is_new));
}

Store::Store(sqlite3* w, sqlite3* r, std::string path, bool created)
    : wdb_(w), rdb_(r), path_(std::move(path)), created_(created) {
  writer_ = std::thread([this] { WriterLoop(); });
}

sqlite3_stmt* Store::Prepared(sqlite3* db, StmtCache* cache, const char* sql) {
  auto it = cache->find(sql);
  if (it != cache->end()) return it->second;
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK) return nullptr;
  (*cache)[sql] = s;
  return s;
}

Store::~Store() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  writer_.join();
  for (auto& [sql, s] : stmts_) sqlite3_finalize(s);
  for (auto& [sql, s] : read_stmts_) sqlite3_finalize(s);
  sqlite3_close(rdb_);
  sqlite3_close(wdb_);
}

Status Store::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(wdb_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "?";
    sqlite3_free(err);
    return Internal(path_ + ": " + m);
  }
  return Status::Ok();
}

Result<Recovered> Store::Load() {
  std::lock_guard<std::mutex> l(read_mu_);
  Recovered out;
  Stmt s(rdb_, "SELECT record FROM jobs ORDER BY job_id");
  if (!s.ok()) return s.Error("load jobs");
  auto active = DecodeRecords(s);
  if (!active.ok()) return active.status();
  out.active_jobs = std::move(*active);
  Stmt m(rdb_, "SELECT MAX(id) FROM (SELECT MAX(job_id) AS id FROM jobs UNION ALL SELECT MAX(job_id) FROM acct_jobs)");
  if (m.ok() && m.Step() == SQLITE_ROW) out.max_job_id = static_cast<uint64_t>(m.Int(0));
  Stmt e(rdb_, "SELECT MAX(seq) FROM job_events");
  if (e.ok() && e.Step() == SQLITE_ROW) out.max_event_seq = static_cast<uint64_t>(e.Int(0));
  Stmt r(rdb_, "SELECT value FROM meta WHERE key='job_id_reserved'");
  if (r.ok() && r.Step() == SQLITE_ROW) out.reserved_job_id = std::stoull(r.Text(0));
  Stmt n(rdb_, "SELECT name, drain, down, reason, reason_time, reason_uid FROM node_state "
               "ORDER BY name");
  if (!n.ok()) return n.Error("load node states");
  while (n.Step() == SQLITE_ROW)
    out.nodes.push_back({n.Text(0), n.Int(1) != 0, n.Int(2) != 0, n.Text(3), n.Int(4), n.Int(5)});
  Stmt g(rdb_, "SELECT node, gpu, reason, reason_time, origin, reason_uid FROM gpu_drain "
               "ORDER BY node, gpu");
  if (!g.ok()) return g.Error("load GPU drains");
  while (g.Step() == SQLITE_ROW)
    out.gpu_drains.push_back(
        {g.Text(0), static_cast<uint32_t>(g.Int(1)), g.Text(2), g.Int(3), g.Text(4), g.Int(5)});
  Stmt a(rdb_, "SELECT kind, name, record FROM assoc ORDER BY kind, name");
  if (!a.ok()) return a.Error("load associations");
  while (a.Step() == SQLITE_ROW) out.assoc_rows.push_back({a.Text(0), a.Text(1), a.Text(2)});
  Stmt as(rdb_, "SELECT value FROM meta WHERE key='assoc_config_seen'");
  if (as.ok() && as.Step() == SQLITE_ROW) out.assoc_config_seen = as.Text(0);
  TESSERA_RETURN_IF_ERROR(LoadUsage(&out));
  Stmt rv(rdb_, "SELECT name, record FROM reservations ORDER BY name");  // issue 17 §1
  if (!rv.ok()) return rv.Error("load reservations");
  while (rv.Step() == SQLITE_ROW) out.reservations.emplace_back(rv.Text(0), rv.Text(1));
  out.created = created_;
  return out;
}

Status Store::LoadUsage(Recovered* out) {
  Stmt u(rdb_, "SELECT account, user, usage FROM assoc_usage ORDER BY account, user");
  if (!u.ok()) return u.Error("load fair-share usage");
  while (u.Step() == SQLITE_ROW) out->usage.push_back({u.Text(0), u.Text(1), std::strtod(u.Text(2).c_str(), nullptr)});
  Stmt m(rdb_, "SELECT key, value FROM meta WHERE key IN ('usage_last_charge', 'usage_last_reset')");
  if (!m.ok()) return m.Error("load fair-share usage times");
  while (m.Step() == SQLITE_ROW)
    (m.Text(0) == "usage_last_charge" ? out->usage_last_charge : out->usage_last_reset) =
        std::strtoll(m.Text(1).c_str(), nullptr, 10);
  return Status::Ok();
}

void Store::Commit(Batch batch, std::function<void(const Status&)> done) {
  {
    std::lock_guard<std::mutex> l(mu_);
    queue_.push_back({std::move(batch), std::move(done)});
  }
  cv_.notify_one();
}

Status Store::CommitSync(Batch batch) {
  std::promise<Status> p;
  auto f = p.get_future();
  Commit(std::move(batch), [&p](const Status& s) { p.set_value(s); });
  return f.get();
}

Status Store::ApplyBatch(const Batch& b) {
  for (const auto& op : b.ops_) {
    switch (op.kind) {
      case Batch::Kind::kPutJob: {
        Stmt s(wdb_, Cached("INSERT OR REPLACE INTO jobs(job_id, state, record) VALUES(?,?,?)"));
        s.Bind(1, static_cast<int64_t>(op.id)).Bind(2, op.n1).Bind(3, op.a);
        TESSERA_RETURN_IF_ERROR(StepDone(s, "write job"));
        break;
      }
      case Batch::Kind::kArchiveJob: {
        Stmt d(wdb_, Cached("DELETE FROM jobs WHERE job_id=?"));
        d.Bind(1, static_cast<int64_t>(op.id));
        TESSERA_RETURN_IF_ERROR(StepDone(d, "archive job"));
        Stmt dp(wdb_, Cached("DELETE FROM job_payloads WHERE job_id=?"));
        dp.Bind(1, static_cast<int64_t>(op.id));
        TESSERA_RETURN_IF_ERROR(StepDone(dp, "archive job"));
        Stmt s(wdb_, Cached("INSERT OR REPLACE INTO acct_jobs VALUES(?,?,?,?,?,?,?,?,?)"));
        const JobRecord& r = *op.rec;
        s.Bind(1, static_cast<int64_t>(r.job_id)).Bind(2, r.uid).Bind(3, r.state)
            .Bind(4, r.submit_time).Bind(5, r.start_time).Bind(6, r.end_time)
            .Bind(7, r.partition).Bind(8, r.spec.account).Bind(9, op.a);
        TESSERA_RETURN_IF_ERROR(StepDone(s, "archive job"));
        break;
      }
      case Batch::Kind::kEvent: {
        Stmt s(wdb_, Cached("INSERT INTO job_events(seq, job_id, time, type, detail) VALUES(?,?,?,?,?)"));
        s.Bind(1, op.n1).Bind(2, static_cast<int64_t>(op.id)).Bind(3, op.n2).Bind(4, op.a).Bind(5, op.b);
        TESSERA_RETURN_IF_ERROR(StepDone(s, "write event"));
        break;
      }
      case Batch::Kind::kPayload: {
        Stmt s(wdb_, Cached("INSERT OR REPLACE INTO job_payloads(job_id, script, env) VALUES(?,?,?)"));
        s.Bind(1, static_cast<int64_t>(op.id)).Bind(2, op.payload->script).BindBlob(3, op.payload->env_block);
        TESSERA_RETURN_IF_ERROR(StepDone(s, "write job payload"));
        break;
      }
      case Batch::Kind::kStep: {
        const StepRecord& st = *op.step;
        Stmt s(wdb_, Cached("INSERT OR REPLACE INTO job_steps(job_id, step_id, name, nodelist, ntasks, "
                            "ncpus, state, exit_code, exit_signal, start_time, end_time, usage) "
                            "VALUES(?,?,?,?,?,?,?,?,?,?,?,?)"));
        s.Bind(1, static_cast<int64_t>(st.job_id)).Bind(2, st.step_id).Bind(3, st.name)
            .Bind(4, st.nodelist).Bind(5, st.ntasks).Bind(6, st.ncpus).Bind(7, st.state)
            .Bind(8, st.exit_code).Bind(9, st.exit_signal).Bind(10, st.start_time).Bind(11, st.end_time)
            .BindBlob(12, st.usage);
        TESSERA_RETURN_IF_ERROR(StepDone(s, "write step"));
        break;
      }
      case Batch::Kind::kNode: {
        Stmt s(wdb_, Cached("INSERT OR REPLACE INTO node_state(name, drain, down, reason, reason_time, "
                            "reason_uid) VALUES(?,?,?,?,?,?)"));
        s.Bind(1, op.a).Bind(2, op.n1 & 1).Bind(3, (op.n1 >> 1) & 1).Bind(4, op.b).Bind(5, op.n2)
            .Bind(6, static_cast<int64_t>(op.id) - 1);
        TESSERA_RETURN_IF_ERROR(StepDone(s, "write node state"));
        break;
      }
      case Batch::Kind::kGpuDrain: {
        Stmt s(wdb_, Cached("INSERT OR REPLACE INTO gpu_drain(node, gpu, reason, reason_time, "
                            "origin, reason_uid) VALUES(?,?,?,?,?,?)"));
        s.Bind(1, op.a).Bind(2, static_cast<int64_t>(op.id)).Bind(3, op.b).Bind(4, op.n1)
            .Bind(5, op.c).Bind(6, op.n2 - 1);
        TESSERA_RETURN_IF_ERROR(StepDone(s, "write GPU drain"));
        break;
      }
      case Batch::Kind::kGpuResume: {
        Stmt s(wdb_, Cached("DELETE FROM gpu_drain WHERE node=? AND gpu=?"));
        s.Bind(1, op.a).Bind(2, static_cast<int64_t>(op.id));
        TESSERA_RETURN_IF_ERROR(StepDone(s, "write GPU resume"));
        break;
      }
      case Batch::Kind::kAssocPut: {
        Stmt s(wdb_, Cached("INSERT OR REPLACE INTO assoc(kind, name, record) VALUES(?,?,?)"));
        s.Bind(1, op.a).Bind(2, op.b).Bind(3, op.c);
        TESSERA_RETURN_IF_ERROR(StepDone(s, "write association"));
        break;
      }
      case Batch::Kind::kAssocDelete: {
        Stmt s(wdb_, Cached("DELETE FROM assoc WHERE kind=? AND name=?"));
        s.Bind(1, op.a).Bind(2, op.b);
        TESSERA_RETURN_IF_ERROR(StepDone(s, "delete association"));
        break;
      }
      case Batch::Kind::kResvPut: {
        Stmt s(wdb_, Cached("INSERT OR REPLACE INTO reservations(name, record) VALUES(?,?)"));
        s.Bind(1, op.a).Bind(2, op.b);
        TESSERA_RETURN_IF_ERROR(StepDone(s, "write reservation"));
        break;
      }
      case Batch::Kind::kResvDelete: {
        Stmt s(wdb_, Cached("DELETE FROM reservations WHERE name=?"));
        s.Bind(1, op.a);
        TESSERA_RETURN_IF_ERROR(StepDone(s, "delete reservation"));
        break;
      }
      case Batch::Kind::kUsage: {
        Stmt s(wdb_, Cached("INSERT OR REPLACE INTO assoc_usage(account, user, usage) VALUES(?,?,?)"));
        s.Bind(1, op.a).Bind(2, op.b).Bind(3, op.c);
        TESSERA_RETURN_IF_ERROR(StepDone(s, "write fair-share usage"));
        break;
      }
      case Batch::Kind::kMeta: {
        Stmt s(wdb_, Cached("INSERT OR REPLACE INTO meta(key, value) VALUES(?,?)"));
        s.Bind(1, op.a).Bind(2, op.b);
        TESSERA_RETURN_IF_ERROR(StepDone(s, "write meta"));
        break;
      }
    }
  }
  return Status::Ok();
}

void Store::WriterLoop() {
  while (true) {
    std::deque<Pending> work;
    std::string injected;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty() && stop_) return;
      work.swap(queue_);
      injected = fail_writes_;
    }
    auto t0 = std::chrono::steady_clock::now();
    Status st = Exec("BEGIN IMMEDIATE");
    for (auto& p : work) {
      if (!st.ok()) break;
      st = ApplyBatch(p.batch);
    }
    if (st.ok() && !injected.empty()) st = Internal(injected);
    std::string why = st.ok() ? "" : injected.empty() ? sqlite3_errmsg(wdb_) : injected;
    if (st.ok()) {
      st = Exec("COMMIT");
      if (!st.ok()) why = sqlite3_errmsg(wdb_);
    }
    if (!st.ok()) {
      (void)Exec("ROLLBACK");
      // One status for every batch of the transaction: none of them is on disk.
      st = Unavailable("state database write failed: " + why);
      Log(st.message() + " (" + path_ + "): " + std::to_string(work.size()) +
          " change(s) rolled back and refused");
    }
    if (on_commit_)
      on_commit_(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count(),
                 work.size());
    {
      std::lock_guard<std::mutex> l(mu_);
      stats_.transactions++;
      stats_.batches += work.size();
    }
    for (auto& p : work)
      if (p.done) p.done(st);
  }
}

void Store::FailWritesForTest(std::string message) {
  std::lock_guard<std::mutex> l(mu_);
  fail_writes_ = std::move(message);
}

Result<std::vector<JobRecord>> Store::QueryAccounting(const AccountingFilter& f) {
  std::string sql = "SELECT record FROM acct_jobs WHERE 1=1";
  if (!f.job_ids.empty()) {
    sql += " AND (job_id IN " + InList(f.job_ids.size());
    if (f.array_span)  // the elements of arrays headed by these ids (filtered below)
      for (size_t k = 0; k < f.job_ids.size(); ++k) sql += " OR job_id BETWEEN ? AND ?";
    sql += ")";
  }
  if (!f.uids.empty()) sql += " AND uid IN " + InList(f.uids.size());
  if (!f.states.empty()) sql += " AND state IN " + InList(f.states.size());
  if (f.start_after) sql += " AND end_time >= ?";
  if (f.end_before) sql += " AND (start_time <= ? OR start_time = 0) AND submit_time <= ?";
  sql += " ORDER BY job_id LIMIT " + std::to_string(f.limit);
  std::lock_guard<std::mutex> l(read_mu_);
  Stmt s(rdb_, sql.c_str());
  if (!s.ok()) return s.Error("query accounting");
  int i = 1;
  for (auto id : f.job_ids) s.Bind(i++, static_cast<int64_t>(id));
  if (f.array_span && !f.job_ids.empty())
    for (auto id : f.job_ids) {
      s.Bind(i++, static_cast<int64_t>(id));
      s.Bind(i++, static_cast<int64_t>(id + f.array_span));
    }
  for (auto u : f.uids) s.Bind(i++, static_cast<int64_t>(u));
  for (auto st : f.states) s.Bind(i++, st);
  if (f.start_after) s.Bind(i++, f.start_after);
  if (f.end_before) {
    s.Bind(i++, f.end_before);
    s.Bind(i++, f.end_before);
  }
  auto rows = DecodeRecords(s);
  if (!rows.ok() || !f.array_span || f.job_ids.empty()) return rows;
  std::vector<JobRecord> out;  // the range rows that are not elements of the named arrays go
  for (auto& r : *rows) {
    bool named = std::find(f.job_ids.begin(), f.job_ids.end(), r.job_id) != f.job_ids.end() ||
                 std::find(f.job_ids.begin(), f.job_ids.end(), r.array_job_id) != f.job_ids.end();
    if (named) out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<JobRecord>> Store::RecentlyFinished(int64_t since) {
  std::lock_guard<std::mutex> l(read_mu_);
  Stmt s(rdb_, "SELECT record FROM acct_jobs WHERE end_time >= ? AND job_id NOT IN "
               "(SELECT job_id FROM jobs) ORDER BY job_id");
  if (!s.ok()) return s.Error("load recently finished jobs");
  s.Bind(1, since);
  return DecodeRecords(s);
}

Result<std::vector<JobEvent>> Store::EventsForJob(uint64_t job_id) {
  std::lock_guard<std::mutex> l(read_mu_);
  Stmt s(rdb_, "SELECT seq, job_id, time, type, detail FROM job_events WHERE job_id=? ORDER BY seq");
  if (!s.ok()) return s.Error("query events");
  s.Bind(1, static_cast<int64_t>(job_id));
  std::vector<JobEvent> out;
  while (s.Step() == SQLITE_ROW)
    out.push_back({static_cast<uint64_t>(s.Int(0)), static_cast<uint64_t>(s.Int(1)), s.Int(2), s.Text(3), s.Text(4)});
  return out;
}

Result<std::vector<JobEvent>> Store::EventsSince(uint64_t seq, size_t limit) {
  std::lock_guard<std::mutex> l(read_mu_);
  Stmt s(rdb_, "SELECT seq, job_id, time, type, detail FROM job_events WHERE seq>? ORDER BY seq LIMIT ?");
  if (!s.ok()) return s.Error("query events");
  s.Bind(1, static_cast<int64_t>(seq)).Bind(2, static_cast<int64_t>(limit));
  std::vector<JobEvent> out;
  while (s.Step() == SQLITE_ROW)
    out.push_back({static_cast<uint64_t>(s.Int(0)), static_cast<uint64_t>(s.Int(1)), s.Int(2), s.Text(3), s.Text(4)});
  return out;
}

Result<JobPayload> Store::LoadPayload(uint64_t job_id) {
  std::lock_guard<std::mutex> l(read_mu_);
  Stmt s(rdb_, CachedRead("SELECT script, env FROM job_payloads WHERE job_id=?"));
  if (!s.ok()) return s.Error("load payload");
  s.Bind(1, static_cast<int64_t>(job_id));
  if (s.Step() != SQLITE_ROW) return NotFound("no script stored for job " + std::to_string(job_id));
  JobPayload p;
  p.script = s.Text(0);
  if (sqlite3_column_type(s.raw(), 1) == SQLITE_BLOB) {  // an environment block
    p.env_block = s.Text(1);
  } else {  // rows written before environment blocks: a JSON object
    auto env = DecodeEnv(s.Text(1));
    if (!env.ok()) return env.status();
    p.env_block = EnvBlockFromMap(*env);
  }
  return p;
}

Result<std::vector<StepRecord>> Store::StepsForJobs(const std::vector<uint64_t>& job_ids) {
  std::vector<StepRecord> out;
  if (job_ids.empty()) return out;
  std::lock_guard<std::mutex> l(read_mu_);
  for (size_t i = 0; i < job_ids.size(); i += 500) {
    size_t n = std::min<size_t>(500, job_ids.size() - i);
    std::string sql = "SELECT job_id, step_id, name, nodelist, ntasks, ncpus, state, exit_code, exit_signal, "
                      "start_time, end_time, usage FROM job_steps WHERE job_id IN " + InList(n) + " ORDER BY job_id, step_id";
    Stmt s(rdb_, sql.c_str());
    if (!s.ok()) return s.Error("query steps");
    for (size_t k = 0; k < n; ++k) s.Bind(static_cast<int>(k + 1), static_cast<int64_t>(job_ids[i + k]));
    while (s.Step() == SQLITE_ROW) {
      StepRecord r;
      r.job_id = static_cast<uint64_t>(s.Int(0));
      r.step_id = static_cast<uint32_t>(s.Int(1));
      r.name = s.Text(2);
      r.nodelist = s.Text(3);
      r.ntasks = static_cast<uint32_t>(s.Int(4));
      r.ncpus = static_cast<uint32_t>(s.Int(5));
      r.state = static_cast<int>(s.Int(6));
      r.exit_code = static_cast<int32_t>(s.Int(7));
      r.exit_signal = static_cast<int32_t>(s.Int(8));
      r.start_time = s.Int(9);
      r.end_time = s.Int(10);
      r.usage = s.Text(11);
      out.push_back(std::move(r));
    }
  }
  return out;
}

StoreStats Store::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  StoreStats s = stats_;
  s.queued = queue_.size();
  return s;
}

}  // namespace tessera::ctld
