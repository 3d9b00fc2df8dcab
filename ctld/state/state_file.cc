#include "ctld/state/state_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace tessera::ctld {
namespace {

constexpr char kRestoreHint[] =
    "restore the last backup (docs/admin-guide.md, \"Backup and restore\") or move the file "
    "away and start with an empty state";

std::string Dir(const std::string& path) {
  std::string d = std::filesystem::path(path).parent_path().string();
  return d.empty() ? "." : d;
}

bool ReadOnlyErrno(int e) { return e == EROFS || e == EACCES || e == EPERM; }

Status ReadOnly(const std::string& what, int e) {
  return PermissionDenied(what + " is read-only (" + std::strerror(e) +
                          "): tessera-ctld must write its state there; make it writable by the "
                          "ctld user (or remount the file system read-write) and start again");
}

// The names of the tables of `db` (empty on error).
std::vector<std::string> Tables(sqlite3* db) {
  std::vector<std::string> out;
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name", -1,
                         &s, nullptr) != SQLITE_OK)
    return out;
  while (sqlite3_step(s) == SQLITE_ROW)
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
  sqlite3_finalize(s);
  return out;
}

}  // namespace

Status PrepareStateDir(const std::string& dir, bool* tightened) {
  *tightened = false;
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
      return FailedPrecondition("cannot create the state directory " + dir + ": " + ec.message());
    if (chmod(dir.c_str(), 0700) != 0)
      return FailedPrecondition("cannot make the state directory " + dir +
                                " private: " + std::strerror(errno));
    return Status::Ok();
  }
  if (!S_ISDIR(st.st_mode))
    return FailedPrecondition("StateSaveLocation " + dir + " is not a directory");
  if ((st.st_mode & 077) != 0) {
    if (chmod(dir.c_str(), st.st_mode & 0700) != 0) {
      if (ReadOnlyErrno(errno)) return ReadOnly("the state directory " + dir, errno);
      return FailedPrecondition("cannot make the state directory " + dir +
                                " private: " + std::strerror(errno));
    }
    *tightened = true;
  }
  return Status::Ok();
}

Status CheckBeforeOpen(const std::string& path, bool init_state, bool* is_new) {
  *is_new = false;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT)
      return FailedPrecondition("cannot examine state database " + path + ": " +
                                std::strerror(errno));
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      if (ReadOnlyErrno(errno)) return ReadOnly("the state directory " + Dir(path), errno);
      return FailedPrecondition("cannot create state database " + path + ": " +
                                std::strerror(errno));
    }
    fchmod(fd, 0600);
    close(fd);
    *is_new = true;
    return Status::Ok();
  }
  if (!S_ISREG(st.st_mode))
    return FailedPrecondition("state database " + path + " is not a regular file");
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    if (ReadOnlyErrno(errno)) return ReadOnly("state database " + path, errno);
    return FailedPrecondition("cannot open state database " + path + ": " + std::strerror(errno));
  }
  char head[16] = {};
  ssize_t n = pread(fd, head, sizeof head, 0);
  close(fd);
  // The WAL and SHM files live next to the database: the directory must be writable too.
  if (access(Dir(path).c_str(), W_OK) != 0 && ReadOnlyErrno(errno))
    return ReadOnly("the directory " + Dir(path) + " of state database " + path, errno);
  if (st.st_size == 0) {
    std::error_code ec;
    bool wal = std::filesystem::file_size(path + "-wal", ec) > 0 && !ec;
    if (wal) return Status::Ok();  // content only in the WAL so far: SQLite reads it
    if (init_state) {
      *is_new = true;
      return Status::Ok();
    }
    return FailedPrecondition(
        "state database " + path +
        " exists but is empty (0 bytes); refusing to take it as a new "
        "cluster (job ids would start again at 1). If this is a new cluster, remove the file or "
        "start once with --init-state; otherwise " +
        std::string(kRestoreHint));
  }
  if (n != static_cast<ssize_t>(sizeof head) || std::memcmp(head, "SQLite format 3", 16) != 0)
    return FailedPrecondition("state database " + path +
                              " is not an SQLite database; refusing to start: " + kRestoreHint);
  return Status::Ok();
}

Result<std::string> QuickCheck(sqlite3* db) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &s, nullptr) != SQLITE_OK)
    return Status(Code::kDataLoss, sqlite3_errmsg(db));
  int rc = sqlite3_step(s);
  std::string out = rc == SQLITE_ROW ? reinterpret_cast<const char*>(sqlite3_column_text(s, 0))
                                     : std::string(sqlite3_errmsg(db));
  sqlite3_finalize(s);
  return out;
}

Status CheckAfterOpen(sqlite3* db, const std::string& path, bool init_state) {
  auto qc = QuickCheck(db);
  std::string verdict = qc.ok() ? *qc : qc.status().message();
  if (verdict != "ok")
    return FailedPrecondition("state database " + path + " is damaged (SQLite quick_check: " +
                              verdict + "); refusing to start: " + kRestoreHint);
  int version = 0;
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, nullptr) == SQLITE_OK &&
      sqlite3_step(s) == SQLITE_ROW)
    version = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  std::vector<std::string> tables = Tables(db);
  if (version == 0 && tables.empty() && init_state) return Status::Ok();
  auto has = [&](const char* t) {
    return std::find(tables.begin(), tables.end(), t) != tables.end();
  };
  if (version > 0 && has("meta") && has("jobs") && has("job_events") && has("acct_jobs"))
    return Status::Ok();
  std::string names;
  for (size_t i = 0; i < tables.size() && i < 5; ++i) names += (i ? ", " : "") + tables[i];
  if (tables.empty())
    return FailedPrecondition(
        "state database " + path +
        " is an SQLite database without any tables, not a "
        "Tessera state; refusing to take it as a new cluster. If this is a new "
        "cluster, start once with --init-state; otherwise " +
        kRestoreHint);
  return FailedPrecondition("state database " + path +
                            " is not a Tessera state database (schema version " +
                            std::to_string(version) + ", tables: " + names +
                            "); refusing to start: check StateSaveLocation, or " + kRestoreHint);
}

Status MakePrivate(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::string p = path + suffix;
    if (chmod(p.c_str(), 0600) != 0 && errno != ENOENT)
      return FailedPrecondition("cannot make " + p +
                                " private (mode 0600): " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace tessera::ctld
