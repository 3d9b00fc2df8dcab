#include "rpc/absl_tuning.h"

#include <absl/synchronization/mutex.h>

namespace tessera::rpc {

void DisableAbslDeadlockDetection() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace tessera::rpc
