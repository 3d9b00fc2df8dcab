// Issue 14 (gpunode): GPU failures a node reports at registration (after its restart or ctld's)
// get the GpuFailurePolicy as an XID under a running job does: which GPUs count as failures.
#include <catch2/catch.hpp>

#include <set>

#include "ctld/gpu_failures.h"

using namespace tessera::ctld;

namespace {

GpuState Gpu(uint32_t index, bool healthy = true, const std::string& reason = "") {
  GpuState g;
  g.index = index;
  g.healthy = healthy;
  g.health_reason = reason;
  return g;
}

std::set<uint32_t> Indices(const std::vector<GpuState>& gpus) {
  std::set<uint32_t> out;
  for (const auto& g : gpus) out.insert(g.index);
  return out;
}

}  // namespace

TEST_CASE("registration: XID and lost GPUs ctld did not drain are failures, drains are not") {
  std::vector<GpuState> before = {Gpu(0), Gpu(1), Gpu(2), Gpu(3), Gpu(4)};
  std::vector<GpuState> now = {
      Gpu(0),
      Gpu(1, false, "XID 79: GPU has fallen off the bus"),
      Gpu(2, false, "GPU lost (fell off the bus or stopped answering)"),
      Gpu(3, false, "XID 48: double bit ECC error"),  // ctld handled it already (drained)
      // GPU 4 is not reported any more: lost
      Gpu(5, false, "maintenance"),  // an admin's drain noded knows: not a failure
  };
  auto failed = RegisteredGpuFailures(before, now, [](uint32_t i) { return i == 3; });
  CHECK(Indices(failed) == std::set<uint32_t>{1, 2, 4});
  for (const auto& g : failed) {
    CHECK_FALSE(g.healthy);
    if (g.index == 4) CHECK(g.health_reason.rfind("GPU lost", 0) == 0);
  }
  CHECK(RegisteredGpuFailures({}, {Gpu(0), Gpu(1)}, [](uint32_t) { return false; }).empty());
}

TEST_CASE("the XID of a health reason") {
  CHECK(XidOfReason("XID 79: GPU has fallen off the bus") == 79);
  CHECK(XidOfReason("XID 13") == 13);
  CHECK(XidOfReason("GPU lost (fell off the bus)") == 0);
  CHECK(XidOfReason("operator says XID 79") == 0);
}
