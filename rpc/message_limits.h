#pragma once
// The largest messages the controller's RPCs carry, on gRPC and on the local socket alike.
//
// Requests: one job spec carries at most a 4 MiB script and a 16 MiB environment block (ctld
// refuses more: ctld/controller.cc), plus fields of a few KiB; kMaxRequestBytes = 64 MiB holds one
// such spec three times over. It is ctld's gRPC max receive size (ctld/main.cc) and the largest
// request frame its local socket reads (rpc/local_wire.h). A bulk SubmitJobs (at most 10,000
// specs) is bounded by this total, not by the product: clients split a larger one into several
// calls (SplitSubmitJobs in rpc/local_wire.h), so every request whose specs ctld accepts fits.
//
// Responses: a listing of a large queue can be big; clients accept up to kMaxResponseBytes (the
// gRPC channels' max receive size, rpc/grpc_util.cc, and the local socket's response frames).
#include <cstdint>

namespace tessera::rpc {

inline constexpr uint32_t kMaxRequestBytes = 64u << 20;
inline constexpr uint32_t kMaxResponseBytes = 256u << 20;

}  // namespace tessera::rpc
