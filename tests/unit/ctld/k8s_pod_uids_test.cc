// Issue 18: JobSpec.k8s_pod_uids (the pods a tessera-bridge job runs, by rank) survives the
// proto -> record -> database -> proto path, and malformed UIDs are refused on submit.
#include <catch2/catch.hpp>

#include "ctld/jobs/job_codec.h"
#include "ctld/rpc/convert.h"

using namespace tessera;
using namespace tessera::ctld;

TEST_CASE("k8s_pod_uids: proto -> record -> JSON -> proto keeps the UIDs in rank order") {
  v1::JobSpec in;
  in.add_k8s_pod_uids("0b9f3c2e-1111-4a6b-9c1d-000000000001");
  in.add_k8s_pod_uids("0b9f3c2e-1111-4a6b-9c1d-000000000002");
  in.add_task_groups()->set_count(2);
  JobRecord r;
  r.job_id = 7;
  r.spec = rpc::FromProto(in);
  CHECK(r.spec.k8s_pod_uids.str() ==
        "0b9f3c2e-1111-4a6b-9c1d-000000000001 0b9f3c2e-1111-4a6b-9c1d-000000000002");
  auto back = DecodeRecord(EncodeRecord(r));
  REQUIRE(back.ok());
  v1::JobInfo info;
  rpc::ToProto(*back, &info);
  REQUIRE(info.spec().k8s_pod_uids_size() == 2);
  CHECK(info.spec().k8s_pod_uids(0) == "0b9f3c2e-1111-4a6b-9c1d-000000000001");
  CHECK(info.spec().k8s_pod_uids(1) == "0b9f3c2e-1111-4a6b-9c1d-000000000002");
}

TEST_CASE("k8s_pod_uids: a job without pods has none, and an old record decodes without them") {
  JobRecord r;
  r.spec = rpc::FromProto(v1::JobSpec{});
  CHECK(r.spec.k8s_pod_uids.empty());
  auto old = DecodeRecord(R"({"job_id": 5, "spec": {"name": "old"}})");
  REQUIRE(old.ok());
  v1::JobInfo info;
  rpc::ToProto(*old, &info);
  CHECK(info.spec().k8s_pod_uids_size() == 0);
}

TEST_CASE("k8s_pod_uids: an empty or malformed UID is refused, naming it") {
  std::vector<std::string> warnings;
  for (const char* bad : {"", "a b", "uid;rm", "x/y"}) {
    v1::JobSpec p;
    p.add_k8s_pod_uids(bad);
    Status s = rpc::CheckRequestOnlyFields(p, &warnings);
    INFO(bad);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find("k8s_pod_uids") != std::string::npos);
  }
  v1::JobSpec good;
  good.add_k8s_pod_uids("6f1c2d3e-aaaa-4bbb-8ccc-123456789abc");
  CHECK(rpc::CheckRequestOnlyFields(good, &warnings).ok());
}
