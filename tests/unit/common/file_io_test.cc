// ReadFile: whole contents (binary, larger than one read), errors naming the path.
#include <catch2/catch.hpp>

#include "common/file_io.h"
#include "temp_dir.h"

using namespace tessera;

TEST_CASE("ReadFile returns the whole file, binary and beyond one read buffer") {
  testing::TempDir dir;
  std::string big(10000, 'x');
  big[5] = '\0';
  big[9999] = '\n';
  auto got = ReadFile(dir.Write("big", big));
  REQUIRE(got.ok());
  CHECK(*got == big);
  auto empty = ReadFile(dir.Write("empty", ""));
  REQUIRE(empty.ok());
  CHECK(empty->empty());
}

TEST_CASE("ReadFile errors name the path: NotFound when missing, Internal otherwise") {
  testing::TempDir dir;
  auto missing = ReadFile(dir.path() + "/nope");
  REQUIRE(!missing.ok());
  CHECK(missing.status().code() == Code::kNotFound);
  CHECK(missing.status().message() == "cannot read " + dir.path() + "/nope: No such file or directory");
  auto directory = ReadFile(dir.path());
  REQUIRE(!directory.ok());
  CHECK(directory.status().code() == Code::kInternal);
  CHECK(directory.status().message().find(dir.path()) != std::string::npos);
}
