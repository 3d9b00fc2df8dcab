#pragma once
// Whole-file reads without iostreams (no locale or stream buffers: stepd runs these for every
// job in a freshly forked process, where each touched page is a copy-on-write fault).
#include <string>

#include "common/status.h"

namespace tessera {

// The file's contents. Errors name the path: NotFound when it does not exist, Internal for any
// other failure to open or read it.
Result<std::string> ReadFile(const std::string& path);

}  // namespace tessera
