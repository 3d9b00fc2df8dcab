// A bulk SubmitJobs over one request's bound (rpc/message_limits.h) is sent in parts, in order,
// and the results are merged; a failing later part leaves its specs with the error.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rpc/submit_split.h"

namespace {

using tessera::Code;
using tessera::Result;
using tessera::Status;
namespace v1 = tessera::v1;
namespace rpc = tessera::rpc;
using Resp = Result<v1::SubmitJobsResponse>;

v1::SubmitJobsRequest Specs(int n, size_t script_bytes) {
  v1::SubmitJobsRequest req;
  for (int i = 0; i < n; ++i) {
    auto* s = req.add_specs();
    s->set_name("j" + std::to_string(i));
    s->set_script(std::string(script_bytes, 'x'));
  }
  return req;
}

}  // namespace

TEST_CASE("submit split: parts keep the order and stay under both bounds") {
  auto req = Specs(7, 1000);
  auto parts = rpc::SplitSubmitJobs(req, 2500, 100);  // two ~1 KiB specs per part
  REQUIRE(parts.size() == 4);
  std::vector<std::string> names;
  for (const auto& p : parts) {
    CHECK(p.ByteSizeLong() <= 2500);
    for (const auto& s : p.specs()) names.push_back(s.name());
  }
  CHECK(names == std::vector<std::string>{"j0", "j1", "j2", "j3", "j4", "j5", "j6"});
  CHECK(rpc::SplitSubmitJobs(req, 1 << 20, 3).size() == 3);  // by count: 3 + 3 + 1
  CHECK(rpc::SplitSubmitJobs(Specs(1, 5000), 2500, 100).size() == 1);  // too big alone: alone
  CHECK(rpc::SplitSubmitJobs(v1::SubmitJobsRequest(), 2500, 100).size() == 1);
}

TEST_CASE("submit split: 10,000 specs with 20 KiB scripts go in parts that each fit the frame") {
  auto req = Specs(10000, 20 << 10);  // ~200 MiB in all, over the 64 MiB bound
  REQUIRE(req.ByteSizeLong() > rpc::kMaxRequestBytes);
  int calls = 0;
  uint64_t next_id = 1;
  auto r = rpc::SubmitJobsInParts(req, [&](const v1::SubmitJobsRequest& part) -> Resp {
    ++calls;
    REQUIRE(part.ByteSizeLong() + rpc::kSubmitPartSlack <= rpc::kMaxRequestBytes);
    v1::SubmitJobsResponse resp;
    for (int i = 0; i < part.specs_size(); ++i) resp.add_results()->set_job_id(next_id++);
    return resp;
  });
  REQUIRE(r.ok());
  CHECK(calls == 4);
  REQUIRE(r->results_size() == 10000);
  CHECK(r->results(0).job_id() == 1);
  CHECK(r->results(9999).job_id() == 10000);
}

TEST_CASE("submit split: a failing first part is the error; a later one marks its specs") {
  auto req = Specs(6, 1000);
  // Parts of the real bound need big specs: fake it with 30 MiB scripts (two per frame).
  auto big = Specs(3, 30 << 20);
  int calls = 0;
  auto fail_first = rpc::SubmitJobsInParts(big, [&](const v1::SubmitJobsRequest&) -> Resp {
    ++calls;
    return Status(Code::kUnavailable, "down");
  });
  CHECK(fail_first.status().code() == Code::kUnavailable);
  CHECK(calls == 1);
  calls = 0;
  auto fail_later = rpc::SubmitJobsInParts(big, [&](const v1::SubmitJobsRequest& part) -> Resp {
    if (calls++ > 0) return Status(Code::kUnavailable, "down");
    v1::SubmitJobsResponse resp;
    for (int i = 0; i < part.specs_size(); ++i) resp.add_results()->set_job_id(100 + i);
    return resp;
  });
  REQUIRE(fail_later.ok());
  REQUIRE(fail_later->results_size() == 3);
  CHECK(fail_later->results(0).job_id() == 100);
  CHECK(fail_later->results(1).job_id() == 101);
  CHECK(fail_later->results(2).code() == static_cast<int32_t>(Code::kUnavailable));
  CHECK(fail_later->results(2).error() == "down");
  // A request that fits is passed through as it is.
  calls = 0;
  auto whole = rpc::SubmitJobsInParts(req, [&](const v1::SubmitJobsRequest& part) -> Resp {
    ++calls;
    CHECK(part.specs_size() == 6);
    return v1::SubmitJobsResponse();
  });
  CHECK(calls == 1);
}
