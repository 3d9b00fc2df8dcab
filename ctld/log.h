#pragma once
// One-line log records to stderr: "2026-11-29T08:04:40 tessera-ctld: message".
#include <string>

namespace tessera::ctld {
void Log(const std::string& msg);
}  // namespace tessera::ctld
