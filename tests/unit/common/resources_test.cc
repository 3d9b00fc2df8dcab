// ResourceVector arithmetic: add, saturating subtract, scale, fit and TRES strings.
#include "common/resources.h"

#include <catch2/catch.hpp>

namespace tessera {
namespace {

ResourceVector Rv(uint32_t cpus, uint64_t mem, std::map<std::string, uint32_t> gpus = {}) {
  ResourceVector r;
  r.cpus = cpus;
  r.mem_mib = mem;
  r.gpus = std::move(gpus);
  return r;
}

TEST_CASE("resources: add and total GPUs", "[resources]") {
  ResourceVector a = Rv(4, 1024, {{"a100", 2}});
  a += Rv(2, 512, {{"a100", 1}, {"h100", 4}});
  CHECK(a == Rv(6, 1536, {{"a100", 3}, {"h100", 4}}));
  CHECK(a.TotalGpus() == 7);
  CHECK_FALSE(a.IsZero());
  CHECK(ResourceVector{}.IsZero());
}

TEST_CASE("resources: subtraction saturates at zero and drops empty models", "[resources]") {
  ResourceVector a = Rv(4, 1024, {{"a100", 2}, {"h100", 1}});
  a -= Rv(1, 2048, {{"a100", 2}, {"t4", 3}});
  CHECK(a.cpus == 3);
  CHECK(a.mem_mib == 0);
  CHECK(a.gpus == std::map<std::string, uint32_t>{{"h100", 1}});
  a -= Rv(10, 0, {{"h100", 5}});
  CHECK(a.IsZero());
  CHECK(a.gpus.empty());
}

TEST_CASE("resources: scaling", "[resources]") {
  CHECK(Rv(2, 100, {{"a100", 1}}) * 3 == Rv(6, 300, {{"a100", 3}}));
  CHECK((Rv(2, 100, {{"a100", 1}}) * 0).IsZero());
}

TEST_CASE("resources: Fits", "[resources]") {
  ResourceVector free = Rv(8, 4096, {{"a100", 2}, {"h100", 1}});
  CHECK(free.Fits(Rv(8, 4096)));
  CHECK_FALSE(free.Fits(Rv(9, 1)));
  CHECK_FALSE(free.Fits(Rv(1, 4097)));
  CHECK(free.Fits(Rv(1, 1, {{"a100", 2}})));
  CHECK_FALSE(free.Fits(Rv(1, 1, {{"a100", 3}})));
  CHECK_FALSE(free.Fits(Rv(1, 1, {{"v100", 1}})));  // a model the node does not have
  CHECK(free.Fits(Rv(1, 1, {{"v100", 0}})));        // zero of any model is nothing
  // Any-model GPUs come from what the typed request leaves over.
  CHECK(free.Fits(Rv(1, 1), 3));
  CHECK_FALSE(free.Fits(Rv(1, 1), 4));
  CHECK(free.Fits(Rv(1, 1, {{"a100", 1}}), 2));
  CHECK_FALSE(free.Fits(Rv(1, 1, {{"a100", 2}}), 2));
  CHECK(ResourceVector{}.Fits(ResourceVector{}));
}

TEST_CASE("resources: TRES string", "[resources]") {
  CHECK(Rv(4, 8192, {{"a100", 2}}).ToString() == "cpu=4,mem=8G,gres/gpu=2,gres/gpu:a100=2");
  CHECK(Rv(1, 0).ToString() == "cpu=1");
  CHECK(Rv(2, 1536).ToString() == "cpu=2,mem=1.50G");
  CHECK(Rv(2, 512, {{"a100", 1}, {"h100", 2}}).ToString() ==
        "cpu=2,mem=512M,gres/gpu=3,gres/gpu:a100=1,gres/gpu:h100=2");
}

}  // namespace
}  // namespace tessera
