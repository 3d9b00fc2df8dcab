#pragma once
// Signal names as scancel accepts them: "KILL", "SIGKILL", "kill", or a number 1..64.
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::cli {

// Error: invalid signal "FOO".
Result<int> ParseSignal(std::string_view s);

}  // namespace tessera::cli
