// Store::Backup: an online copy of the state database with SQLite's backup API.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ctld/state/store.h"

namespace tessera::ctld {
namespace {

// Closes the connections it holds.
struct Conns {
  sqlite3* src = nullptr;
  sqlite3* dst = nullptr;
  ~Conns() {
    sqlite3_close(dst);
    sqlite3_close(src);
  }
};

Status FsyncPath(const std::string& path, int flags) {
  int fd = open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Internal("backup: cannot open " + path + ": " + std::strerror(errno));
  int rc = fsync(fd);
  int e = errno;
  close(fd);
  if (rc != 0) return Internal("backup: cannot sync " + path + ": " + std::strerror(e));
  return Status::Ok();
}

// Copies every page of `src` to `dst` in one step: one read transaction, so one consistent
// snapshot (in WAL mode the writer is not blocked meanwhile).
Result<int64_t> CopyPages(Conns& c) {
  sqlite3_backup* b = sqlite3_backup_init(c.dst, "main", c.src, "main");
  if (!b) return Internal(std::string("backup: ") + sqlite3_errmsg(c.dst));
  int rc = sqlite3_backup_step(b, -1);
  int64_t pages = sqlite3_backup_pagecount(b);
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) return Internal(std::string("backup failed: ") + sqlite3_errstr(rc));
  return pages;
}

Status IntegrityCheck(sqlite3* db, const std::string& path) {
  sqlite3_stmt* s = nullptr;
  std::string verdict = "no answer";
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check(1)", -1, &s, nullptr) == SQLITE_OK &&
      sqlite3_step(s) == SQLITE_ROW)
    verdict = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  else
    verdict = sqlite3_errmsg(db);
  sqlite3_finalize(s);
  if (verdict != "ok") return Internal("backup " + path + " fails integrity_check: " + verdict);
  return Status::Ok();
}

}  // namespace

Result<BackupInfo> Store::Backup(const std::string& dest) {
  namespace fs = std::filesystem;
  if (dest.empty() || dest[0] != '/')
    return InvalidArgument(
        "backup: the file must be an absolute path on the controller's host, not \"" + dest + "\"");
  std::error_code ec;
  if (fs::exists(dest, ec))
    return AlreadyExists("backup: " + dest + " exists; backups never overwrite a file");
  std::string dir = fs::path(dest).parent_path().string();
  if (!fs::is_directory(dir, ec))
    return InvalidArgument("backup: no directory " + dir + " on the controller's host");
  std::string tmp = dest + ".tmp";
  int fd = open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return FailedPrecondition("backup: cannot create " + tmp + ": " + std::strerror(errno));
  fchmod(fd, 0600);  // job scripts and environments: as private as the state itself
  close(fd);
  auto fail = [&tmp](Status st) {
    unlink(tmp.c_str());
    return st;
  };
  BackupInfo info;
  {
    Conns c;
    if (sqlite3_open_v2(path_.c_str(), &c.src, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK ||
        sqlite3_open_v2(tmp.c_str(), &c.dst, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK)
      return fail(Internal("backup: cannot open the databases: " +
                           std::string(sqlite3_errmsg(c.dst ? c.dst : c.src))));
    sqlite3_busy_timeout(c.src, 5000);
    auto pages = CopyPages(c);
    if (!pages.ok()) return fail(pages.status());
    info.pages = *pages;
    if (Status st = IntegrityCheck(c.dst, dest); !st.ok()) return fail(st);
  }
  if (Status st = FsyncPath(tmp, O_RDONLY); !st.ok()) return fail(st);
  if (rename(tmp.c_str(), dest.c_str()) != 0)
    return fail(
        Internal("backup: cannot rename " + tmp + " to " + dest + ": " + std::strerror(errno)));
  (void)FsyncPath(dir, O_RDONLY | O_DIRECTORY);
  info.path = dest;
  info.bytes = static_cast<int64_t>(fs::file_size(dest, ec));
  return info;
}

}  // namespace tessera::ctld
