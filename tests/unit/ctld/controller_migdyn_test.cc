// ctld applying the scheduler's dynamic MIG plan (controller_mig.cc): ConfigureMig with the
// planned layout, the GPU held (no second request) until noded answers, a refusal logged, the
// GPU released and cooled down (no retry storm).
#include <catch2/catch.hpp>

#include "core_driven_controller.h"

using namespace tessera;
using namespace tessera::ctld;
using namespace tessera::ctld::testing;

namespace {

class MigLink : public RecordingLink {
 public:
  std::vector<std::string> mig;  // "gpu G create P@S,... destroy U,..."
  std::vector<uint64_t> ids;
  void ConfigureMig(uint64_t id, uint32_t gpu, const std::vector<MigPlacementReq>& create,
                    const std::vector<std::string>& destroy) override {
    std::string s = "gpu " + std::to_string(gpu) + " create";
    for (const auto& c : create) s += " " + c.profile + "@" + std::to_string(c.start);
    s += " destroy";
    for (const auto& d : destroy) s += " " + d;
    mig.push_back(s);
    ids.push_back(id);
  }
};

GpuState SevenOnes() {
  GpuState g;
  g.index = 0;
  g.uuid = "GPU-d1-0";
  g.model = "h100";
  g.mig_enabled = true;
  for (uint32_t s = 0; s < 7; ++s) g.mig.push_back({"1g.10gb", s, 1, "MIG-" + std::to_string(s), 0, s + 1});
  return g;
}

void RunFor(CoreDrivenController& f, int ms) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  f.RunUntil([&] { return std::chrono::steady_clock::now() > until; });
}

}  // namespace

TEST_CASE("dynamic MIG: ctld sends the plan, holds the GPU until the answer, cools down a refusal") {
  CoreDrivenController f(
      "NodeName=d1 CPUs=2 RealMemory=1000 Gres=gpu:h100:1 MigStrategy=dynamic\n"
      "PartitionName=p Nodes=d1 Default=YES\n");
  auto link = std::make_shared<MigLink>();
  RegisterInfo info;
  info.node = "d1";
  info.cpus = 2;
  info.mem_mib = 1000;
  info.gpus = {SevenOnes()};
  REQUIRE(f.ctl->OnRegister(info, link).ok());
  JobSpec spec;
  spec.task_groups.push_back({"main", 1, {1, 0, 1, "2g.20gb"}, 0, {}});
  f.Submit(spec);  // accepted: the dynamic H100 can offer 2g.20gb
  f.RunUntil([&] { return !link->mig.empty(); });
  CHECK(link->mig[0] == "gpu 0 create 2g.20gb@0 destroy MIG-0 MIG-1");
  // Unanswered: later cycles do not send it again.
  f.ctl->RequestSchedule();
  RunFor(f, 300);
  CHECK(link->mig.size() == 1);
  // Refused: the GPU is released but not planned again at once.
  f.ctl->OnMigConfigured(link->ids[0], FailedPrecondition("MIG instance MIG-0 is in use"), SevenOnes());
  f.ctl->RequestSchedule();
  RunFor(f, 300);
  CHECK(link->mig.size() == 1);
}
