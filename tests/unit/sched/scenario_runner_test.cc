// Runs every tests/scenarios/*.scn file as its own Catch2 test case ("scenario: <file>"); a new
// file is a new test. Also checks that a malformed scenario is reported with its line.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/unit/sched/scenario.h"

namespace fs = std::filesystem;
using tessera::sched::testing::ParseScenario;
using tessera::sched::testing::RunScenario;

namespace {

class ScenarioInvoker : public Catch::ITestInvoker {
 public:
  explicit ScenarioInvoker(std::string path) : path_(std::move(path)) {}
  void invoke() const override {
    auto sc = ParseScenario(path_);
    INFO(path_);
    REQUIRE(sc.ok());
    REQUIRE_FALSE(sc->expects.empty());
    auto errors = RunScenario(*sc);
    for (const auto& e : errors) FAIL_CHECK(e);
    CHECK(errors.empty());
  }

 private:
  std::string path_;
};

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(TESSERA_SCENARIO_DIR, ec))
    if (e.path().extension() == ".scn") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Registers one test per file before main runs (Catch2 v2's registration hook).
struct Registrar {
  Registrar() {
    for (const auto& f : ScenarioFiles()) {
      names.push_back("scenario: " + fs::path(f).filename().string());
      regs.push_back(std::make_unique<Catch::AutoReg>(new ScenarioInvoker(f), CATCH_INTERNAL_LINEINFO,
                                                      Catch::StringRef(),
                                                      Catch::NameAndTags{names.back().c_str(), "[scenario]"}));
    }
  }
  std::vector<std::string> names;
  std::vector<std::unique_ptr<Catch::AutoReg>> regs;
};
Registrar registrar;

}  // namespace

TEST_CASE("the scenario directory holds at least 30 cases") {
  CHECK(ScenarioFiles().size() >= 30);
}

TEST_CASE("a malformed scenario names its file and line") {
  fs::path p = fs::temp_directory_path() / "tessera_bad_scenario.scn";
  {
    std::FILE* f = std::fopen(p.c_str(), "w");
    std::fputs("node n1 cpus=4 partitions=p\npartition p\njob 1 cpus=x\n", f);
    std::fclose(f);
  }
  auto sc = ParseScenario(p.string());
  REQUIRE_FALSE(sc.ok());
  CHECK(sc.status().message().find("tessera_bad_scenario.scn:3") != std::string::npos);
  fs::remove(p);
}
