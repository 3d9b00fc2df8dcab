#pragma once
// The stepd -> noded wake-up: a unix datagram socket at <spool>/noded.sock. stepd sends the job
// id as decimal text after writing the status file. Best effort: noded also polls status files
// (once a second), so a lost datagram (noded down or stuck) only delays the report.
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::noded {

// Binds the socket (replacing a stale one), mode 0600. Returns the fd (close-on-exec).
Result<int> BindNotifySocket(const std::string& path);
// Waits up to `timeout_ms` for a datagram, then takes every one queued; returns their job ids
// (garbage skipped), none on timeout.
std::vector<uint64_t> ReceiveNotify(int fd, int timeout_ms);
// Sends "<job_id>" to the socket. The kernel queues only net.unix.max_dgram_qlen (often 10)
// datagrams per socket, fewer than the jobs of a node that can end together: a full queue makes
// the sender wait for room, up to kNotifySendTimeoutMs, instead of dropping the wake-up (which
// then cost the job up to a second). Errors when nobody listens or on that timeout.
inline constexpr int kNotifySendTimeoutMs = 200;
Status SendNotify(const std::string& path, uint64_t job_id);

}  // namespace tessera::noded
