#pragma once
// Start-up checks of the state database file and its directory (issue: hardening, part 3).
//
// Contract:
//  - PrepareStateDir: creates the directory mode 0700 (whatever the umask) or, when it exists,
//    tightens it to 0700 (*tightened says so, for a log line).
//  - CheckBeforeOpen: decides, before SQLite touches the file, whether `path` is a new state
//    (*is_new: absent; or zero-length and init_state) and refuses a file that is not a regular
//    file, is read-only (or sits in a read-only directory), is zero-length without init_state,
//    or does not start with the SQLite header. A new file is created here, mode 0600.
//  - CheckAfterOpen: on the open connection of an existing file, PRAGMA quick_check must say
//    "ok" and the schema must be Tessera's (user_version > 0 and its tables), or, with
//    init_state, a table-less database; else a refusal.
//  - MakePrivate: chmod 0600 of the database and its -wal and -shm files (those that exist).
//  Every refusal is FailedPrecondition (PermissionDenied for read-only) with a message naming
//  the file, what is wrong and what to do (docs/admin-guide.md, "When ctld refuses to start").
#include <sqlite3.h>

#include <string>

#include "common/status.h"

namespace tessera::ctld {

Status PrepareStateDir(const std::string& dir, bool* tightened);
Status CheckBeforeOpen(const std::string& path, bool init_state, bool* is_new);
Status CheckAfterOpen(sqlite3* db, const std::string& path, bool init_state);
Status MakePrivate(const std::string& path);

// The text of PRAGMA quick_check (first problem only): "ok" for a sound database.
Result<std::string> QuickCheck(sqlite3* db);

}  // namespace tessera::ctld
