#pragma once
// One-line log records on stderr: "2024-05-01T12:00:00.123Z tessera-noded[42]: message".
// Stateless (no logger object): each call formats and writes one line with a single write(2),
// so lines from threads never interleave.
#include <string_view>

namespace tessera::noded {

void LogLine(std::string_view program, std::string_view message);

}  // namespace tessera::noded
