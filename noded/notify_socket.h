#pragma once
// The stepd -> noded wake-up: a unix datagram socket at <spool>/noded.sock. stepd sends the job
// id as decimal text after writing the status file. Best effort: noded also polls status files,
// so a lost datagram (noded down, socket full) only delays the report.
#include <cstdint>
#include <string>

#include "common/status.h"

namespace tessera::noded {

// Binds the socket (replacing a stale one), mode 0600. Returns the fd (close-on-exec).
Result<int> BindNotifySocket(const std::string& path);
// Waits up to `timeout_ms` for one datagram; returns the job id, 0 on timeout or garbage.
uint64_t ReceiveNotify(int fd, int timeout_ms);
// Sends "<job_id>" to the socket; errors when nobody listens.
Status SendNotify(const std::string& path, uint64_t job_id);

}  // namespace tessera::noded
