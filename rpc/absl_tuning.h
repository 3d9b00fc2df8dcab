#pragma once
// Debian builds Abseil without NDEBUG, so every absl::Mutex that gRPC locks runs Abseil's
// lock-order (deadlock) detector: a graph of every mutex held together, updated on each lock.
// With thousands of connections (a controller with 10,000 node streams) gRPC holds thousands
// of mutexes and that graph dominated ctld's CPU: its accept/handshake path stalled and node
// registrations timed out (bench/RESULTS.md, "A controller for 10,000 nodes"). Release builds
// of Abseil never run the detector; this turns it off the same way, once, at process start.
namespace tessera::rpc {

// Call first thing in main(), before any gRPC object exists.
void DisableAbslDeadlockDetection();

}  // namespace tessera::rpc
