#pragma once
// The control signals noded sends a stepd name the job they are meant for, in the value queued
// with them (sigqueue). A zygote-forked stepd runs several jobs, one after another; a signal
// aimed at the job that just ended must not reach the next one. (noded also sends none for a job
// with a status file, JobManager::Signal: these are standard signals, which do not queue, so a
// stale one still pending would swallow the next job's.)
//   SIGTERM with StepdSignalValue(job, 0)  cancel the job
//   SIGUSR1 with StepdSignalValue(job, N)  forward signal N to the job's processes
// A signal sent with plain kill() names no job (an administrator, the OS at shutdown): a SIGTERM
// then cancels whatever job the stepd runs, a SIGUSR1 does nothing. Job ids must stay below
// 2^56 (ctld counts them from 1).
#include <signal.h>

#include <cstdint>

namespace tessera::noded {

inline uint64_t StepdSignalValue(uint64_t job_id, int forward) {
  return job_id << 8 | static_cast<uint64_t>(forward & 0xff);
}

// Whether a received signal (its si_code and si_value as a 64-bit integer) is meant for
// `job_id`; *forward = the signal to forward (0: none).
inline bool StepdSignalFor(int si_code, uint64_t value, uint64_t job_id, int* forward) {
  if (si_code != SI_QUEUE) {
    *forward = 0;
    return true;
  }
  *forward = static_cast<int>(value & 0xff);
  return value >> 8 == job_id;
}

}  // namespace tessera::noded
