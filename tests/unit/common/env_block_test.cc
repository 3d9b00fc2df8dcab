#include "common/env_block.h"

#include <catch2/catch.hpp>

using namespace tessera;

TEST_CASE("environment blocks round-trip a map and later entries win") {
  std::map<std::string, std::string> env{{"HOME", "/home/x"}, {"EMPTY", ""}, {"EQ", "a=b"}};
  std::string b = EnvBlockFromMap(env);
  CHECK(b == std::string("EMPTY=\0EQ=a=b\0HOME=/home/x\0", 27));
  CHECK(ValidateEnvBlock(b).ok());
  CHECK(EnvBlockToMap(b) == env);
  EnvBlockSet(&b, "HOME", "/elsewhere");
  CHECK(EnvBlockToMap(b).at("HOME") == "/elsewhere");
  CHECK(ValidateEnvBlock("").ok());
  CHECK(EnvBlockToMap("").empty());
}

TEST_CASE("malformed environment blocks name the bad entry") {
  auto no_nul = ValidateEnvBlock("A=1");
  CHECK(no_nul.code() == Code::kInvalidArgument);
  CHECK(no_nul.message().find("NUL") != std::string::npos);
  auto no_eq = ValidateEnvBlock(std::string("A=1\0JUNK\0", 9));
  CHECK(no_eq.code() == Code::kInvalidArgument);
  CHECK(no_eq.message().find("entry 2") != std::string::npos);
  CHECK(no_eq.message().find("JUNK") != std::string::npos);
  CHECK(!ValidateEnvBlock(std::string("=x\0", 3)).ok());
}
