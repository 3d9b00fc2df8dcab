// Status and Result<T>.
#include "common/status.h"

#include <catch2/catch.hpp>

#include <memory>

namespace tessera {
namespace {

Status FailIfNegative(int x) {
  if (x < 0) return InvalidArgument("negative: " + std::to_string(x));
  return Status::Ok();
}

Status Chain(int x) {
  TESSERA_RETURN_IF_ERROR(FailIfNegative(x));
  return NotFound("reached the end");
}

TEST_CASE("status: codes, names and ToString", "[status]") {
  CHECK(Status::Ok().ok());
  CHECK(Status::Ok().ToString() == "OK");
  Status s = InvalidArgument("bad thing");
  CHECK_FALSE(s.ok());
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.ToString() == "INVALID_ARGUMENT: bad thing");
  CHECK(std::string(CodeName(Code::kUnauthenticated)) == "UNAUTHENTICATED");
  CHECK(static_cast<int>(Code::kUnauthenticated) == 16);  // gRPC's value
  CHECK(static_cast<int>(Code::kNotFound) == 5);
}

TEST_CASE("status: TESSERA_RETURN_IF_ERROR returns the first error", "[status]") {
  CHECK(Chain(-1).message() == "negative: -1");
  CHECK(Chain(1).code() == Code::kNotFound);
}

TEST_CASE("result: value or status", "[status]") {
  Result<int> ok = 7;
  CHECK(ok.ok());
  CHECK(*ok == 7);
  CHECK(ok.status().ok());
  Result<int> bad = PermissionDenied("no");
  CHECK_FALSE(bad.ok());
  CHECK(bad.status().code() == Code::kPermissionDenied);
  Result<std::unique_ptr<int>> moved = std::make_unique<int>(3);
  std::unique_ptr<int> p = std::move(moved).value();
  CHECK(*p == 3);
}

}  // namespace
}  // namespace tessera
