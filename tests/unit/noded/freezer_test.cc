// The cgroup freezer used to suspend jobs (issue 16 §4: preemption by SUSPEND), on fake
// v1 and v2 trees: the right file gets the right value; a tree without a freezer says so.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "noded/cgroup_impl.h"

using namespace tessera;
using namespace tessera::noded;
namespace fs = std::filesystem;

namespace {

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path TempDir() {
  char tmpl[] = "/tmp/tessera-freezer-XXXXXX";
  return mkdtemp(tmpl);
}

}  // namespace

TEST_CASE("cgroup freezer: v1 freezer.state and v2 cgroup.freeze; none without a freezer") {
  fs::path root = TempDir();
  fs::create_directories(root / "freezer/tessera/job_7");
  std::ofstream(root / "freezer/tessera/job_7/freezer.state") << "THAWED\n";
  CgroupMounts m1;
  m1.mode = CgroupMode::kV1;
  m1.root = root.string();
  m1.v1["freezer"] = (root / "freezer").string();
  CgroupV1 v1(m1);
  REQUIRE(v1.Freeze("tessera/job_7", true).ok());
  CHECK(Read(root / "freezer/tessera/job_7/freezer.state").find("FROZEN") == 0);
  REQUIRE(v1.Freeze("tessera/job_7", false).ok());
  CHECK(Read(root / "freezer/tessera/job_7/freezer.state").find("THAWED") == 0);
  CgroupMounts no_freezer = m1;
  no_freezer.v1.erase("freezer");
  no_freezer.v1["pids"] = (root / "pids").string();
  CHECK(CgroupV1(no_freezer).Freeze("tessera/job_7", true).code() == Code::kUnimplemented);

  fs::create_directories(root / "unified/tessera/job_8");
  std::ofstream(root / "unified/tessera/job_8/cgroup.freeze") << "0\n";
  CgroupMounts m2;
  m2.mode = CgroupMode::kV2;
  m2.root = m2.unified = (root / "unified").string();
  CgroupV2 v2(m2);
  REQUIRE(v2.Freeze("tessera/job_8", true).ok());
  CHECK(Read(root / "unified/tessera/job_8/cgroup.freeze").find("1") == 0);
  REQUIRE(v2.Freeze("tessera/job_8", false).ok());
  CHECK(Read(root / "unified/tessera/job_8/cgroup.freeze").find("0") == 0);
  CHECK(v2.Freeze("tessera/job_9", true).code() == Code::kUnimplemented);  // no such cgroup file
  fs::remove_all(root);
}
