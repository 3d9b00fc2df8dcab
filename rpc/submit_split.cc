#include "rpc/submit_split.h"

namespace tessera::rpc {
namespace {

size_t VarintSize(size_t n) {
  size_t s = 1;
  while (n >= 128) {
    n >>= 7;
    ++s;
  }
  return s;
}

}  // namespace

std::vector<v1::SubmitJobsRequest> SplitSubmitJobs(const v1::SubmitJobsRequest& req,
                                                   size_t max_bytes, int max_specs) {
  std::vector<v1::SubmitJobsRequest> parts(1);
  size_t bytes = 0;
  for (const auto& spec : req.specs()) {
    size_t n = spec.ByteSizeLong();
    size_t framed = 1 + VarintSize(n) + n;  // field tag, length, message
    auto& cur = parts.back();
    if (cur.specs_size() > 0 && (cur.specs_size() >= max_specs || bytes + framed > max_bytes)) {
      parts.emplace_back();
      bytes = 0;
    }
    *parts.back().add_specs() = spec;
    bytes += framed;
  }
  return parts;
}

Result<v1::SubmitJobsResponse> SubmitJobsInParts(
    const v1::SubmitJobsRequest& req,
    const std::function<Result<v1::SubmitJobsResponse>(const v1::SubmitJobsRequest&)>& call) {
  auto parts = SplitSubmitJobs(req, kMaxRequestBytes - kSubmitPartSlack, kMaxSubmitSpecs);
  if (parts.size() == 1) return call(req);
  v1::SubmitJobsResponse all;
  for (size_t i = 0; i < parts.size(); ++i) {
    auto r = call(parts[i]);
    if (!r.ok() && i == 0) return r.status();
    for (int k = 0; k < parts[i].specs_size(); ++k) {
      auto* out = all.add_results();
      if (!r.ok()) {
        out->set_code(static_cast<int32_t>(r.status().code()));
        out->set_error(r.status().message());
      } else if (k < r->results_size()) {
        *out = r->results(k);
      } else {
        out->set_code(static_cast<int32_t>(Code::kDataLoss));
        out->set_error("no result for this spec in the controller's answer");
      }
    }
  }
  return all;
}

}  // namespace tessera::rpc
