#pragma once
// A bulk SubmitJobs cut to what one request may carry (rpc/message_limits.h): at most
// kMaxSubmitSpecs specs and kMaxRequestBytes serialized bytes per call. The controller clients
// (cli/lib) send a larger bulk request as several calls, so any set of specs ctld would accept
// one by one also goes through in bulk.
#include <functional>
#include <type_traits>
#include <vector>

#include "common/status.h"
#include "rpc/message_limits.h"
#include "tessera/v1/controller.pb.h"

namespace tessera::rpc {

inline constexpr int kMaxSubmitSpecs = 10000;  // ctld's bound per SubmitJobs call
// Room left in a part for the method name and framing.
inline constexpr size_t kSubmitPartSlack = 16384;  // + a munge credential on the TCP wire

// Consecutive parts of `req`, in order, each of at most `max_specs` specs and `max_bytes`
// serialized bytes; a single spec over `max_bytes` is a part of its own (ctld refuses it with a
// clear error). An empty request gives one empty part.
std::vector<v1::SubmitJobsRequest> SplitSubmitJobs(const v1::SubmitJobsRequest& req,
                                                   size_t max_bytes, int max_specs);

// Sends `req` through `call` in parts of SplitSubmitJobs(req, kMaxRequestBytes - slack,
// kMaxSubmitSpecs) and merges the results in the specs' order. When the first part's call fails
// that is the error (nothing was submitted); when a later one fails, each of its specs gets the
// error as its result (the jobs of earlier parts stand).
Result<v1::SubmitJobsResponse> SubmitJobsInParts(
    const v1::SubmitJobsRequest& req,
    const std::function<Result<v1::SubmitJobsResponse>(const v1::SubmitJobsRequest&)>& call);

// A client's call of any unary method: `call(req)`, except that a SubmitJobsRequest goes through
// SubmitJobsInParts. For the clients' per-method templates.
template <typename Resp, typename Req, typename F>
Result<Resp> CallInParts(const Req& req, F&& call) {
  if constexpr (std::is_same_v<Req, v1::SubmitJobsRequest>) {
    return SubmitJobsInParts(req, call);
  } else {
    return call(req);
  }
}

}  // namespace tessera::rpc
