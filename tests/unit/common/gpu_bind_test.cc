// srun --gpu-bind (issue 19, h19 s7): the forms Slurm 22.05's srun takes, and which of a step's
// GPUs on a node each task gets (the rules of slurmstepd's gres code: per_task skips
// local_id*N GPUs, map/mask by local id with the list reused, single blocks, no binding for a
// single task on the node, the first GPU when a task would get none).
#include "common/gpu_bind.h"

#include <catch2/catch.hpp>

namespace tessera {
namespace {

using Pos = std::vector<size_t>;

GpuBind Parse(const std::string& v) {
  auto b = ParseGpuBind(v);
  INFO(v << ": " << b.status().ToString());
  REQUIRE(b.ok());
  return *b;
}

TEST_CASE("srun --gpu-bind values as srun takes them", "[gpu_bind]") {
  CHECK(Parse("none").kind == GpuBind::kNone);
  CHECK(Parse("verbose,none").kind == GpuBind::kNone);
  CHECK(Parse("closest").kind == GpuBind::kClosest);
  auto p = Parse("per_task:2");
  CHECK(p.kind == GpuBind::kPerTask);
  CHECK(p.count == 2);
  CHECK(Parse("single:3").count == 3);
  CHECK(Parse("map_gpu:0,1").list == std::vector<uint64_t>{0, 1});
  CHECK(Parse("map_gpu:1*2,0x3").list == std::vector<uint64_t>{1, 1, 3});
  CHECK(Parse("map_gpu:2*0").list == std::vector<uint64_t>{2});  // Slurm: 0 repeats once
  CHECK(Parse("mask_gpu:0x3,c").list == std::vector<uint64_t>{3, 12});  // always hexadecimal
  CHECK(Parse("mask_gpu:10").list == std::vector<uint64_t>{16});
  CHECK(Parse("verbose,mask_gpu:f0*2").list == std::vector<uint64_t>{0xf0, 0xf0});
  for (std::string bad : {"", "all", "per_task", "per_task:0", "per_task:x", "single:",
                          "map_gpu:", "map_gpu:a", "map_gpu:1,,2", "map_gpu:1*", "mask_gpu:0",
                          "mask_gpu:xyz", "map_gpu:0*99999", "closest,none"}) {
    auto b = ParseGpuBind(bad);
    INFO(bad);
    CHECK(b.status().code() == Code::kInvalidArgument);
    CHECK(b.status().message().find("--gpu-bind value \"" + bad + "\"") != std::string::npos);
  }
  CHECK(ParseGpuBind(std::string("map_gpu:0*4096,1")).status().message().find("4096") !=
        std::string::npos);
}

TEST_CASE("each task's GPUs among the step's on its node", "[gpu_bind]") {
  auto per2 = Parse("per_task:2");
  CHECK(TaskGpuPositions(per2, 8, 0, 4) == Pos{0, 1});
  CHECK(TaskGpuPositions(per2, 8, 3, 4) == Pos{6, 7});
  CHECK(TaskGpuPositions(per2, 5, 2, 3) == Pos{4});     // what is left
  CHECK(TaskGpuPositions(per2, 4, 2, 3) == Pos{0});     // none left: the first GPU
  CHECK(TaskGpuPositions(per2, 8, 0, 1) == Pos{0, 1, 2, 3, 4, 5, 6, 7});  // one task here
  CHECK(TaskGpuPositions(per2, 0, 0, 4).empty());
  CHECK(TaskGpuPositions(Parse("none"), 3, 1, 3) == Pos{0, 1, 2});
  CHECK(TaskGpuPositions(Parse("closest"), 2, 1, 2) == Pos{0, 1});
  auto map = Parse("map_gpu:3,1*2");
  CHECK(TaskGpuPositions(map, 4, 0, 4) == Pos{3});
  CHECK(TaskGpuPositions(map, 4, 2, 4) == Pos{1});
  CHECK(TaskGpuPositions(map, 4, 3, 4) == Pos{3});      // the list again from its start
  CHECK(TaskGpuPositions(map, 2, 0, 4) == Pos{0});      // 3 is outside: the first GPU
  auto mask = Parse("mask_gpu:0x5,0x2");
  CHECK(TaskGpuPositions(mask, 4, 0, 2) == Pos{0, 2});
  CHECK(TaskGpuPositions(mask, 4, 1, 2) == Pos{1});
  CHECK(TaskGpuPositions(mask, 1, 1, 2) == Pos{0});
  auto single = Parse("single:2");
  CHECK(TaskGpuPositions(single, 2, 0, 6) == Pos{0});
  CHECK(TaskGpuPositions(single, 2, 3, 6) == Pos{1});
  CHECK(TaskGpuPositions(single, 2, 4, 6) == Pos{0});   // modulo the GPUs
}

}  // namespace
}  // namespace tessera
