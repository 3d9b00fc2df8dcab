// Slurm time-limit and memory syntax; golden values from Slurm's time_str2secs.
#include "common/duration.h"

#include <catch2/catch.hpp>

namespace tessera {
namespace {

int64_t Secs(const char* s) {
  auto r = ParseTimeLimit(s);
  INFO(s << " -> " << r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("time limits: Slurm's forms", "[duration]") {
  CHECK(Secs("60") == 3600);         // minutes
  CHECK(Secs("60:15") == 3615);      // minutes:seconds
  CHECK(Secs("2:3:4") == 7384);      // hours:minutes:seconds
  CHECK(Secs("1-0") == 86400);       // days-hours
  CHECK(Secs("1-1:60") == 86400 + 3600 + 3600);  // days-hours:minutes
  CHECK(Secs("1-1:60:15") == 93615); // days-hours:minutes:seconds
  CHECK(Secs("0") == 0);
  CHECK(Secs("0:30") == 30);
  CHECK(Secs("30-0") == 30 * 86400);
}

TEST_CASE("time limits: unlimited spellings", "[duration]") {
  CHECK(Secs("UNLIMITED") == kUnlimited);
  CHECK(Secs("unlimited") == kUnlimited);
  CHECK(Secs("INFINITE") == kUnlimited);
  CHECK(Secs("Infinite") == kUnlimited);
  CHECK(Secs("-1") == kUnlimited);
}

TEST_CASE("time limits: malformed input is rejected and named", "[duration]") {
  for (const char* bad : {"60:", " 0:0:0 ", "", ":", "1:2:3:4", "1-", "-5", "abc", "1h", "1-1-1",
                          "1:-1", "1.5", "1-2:3:4:5", "99999999999999999999"}) {
    auto r = ParseTimeLimit(bad);
    INFO("\"" << bad << "\"");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    if (*bad) CHECK_THAT(r.status().message(), Catch::Contains(std::string("\"") + bad + "\""));
  }
}

TEST_CASE("FormatDuration prints like squeue", "[duration]") {
  CHECK(FormatDuration(0) == "0:00");
  CHECK(FormatDuration(59) == "0:59");
  CHECK(FormatDuration(3615) == "1:00:15");
  CHECK(FormatDuration(3599) == "59:59");
  CHECK(FormatDuration(7384) == "2:03:04");
  CHECK(FormatDuration(86400) == "1-00:00:00");
  CHECK(FormatDuration(93615) == "1-02:00:15");
  CHECK(FormatDuration(kUnlimited) == "UNLIMITED");
  CHECK(FormatDuration(-42) == "UNLIMITED");
}

TEST_CASE("FormatDuration and ParseTimeLimit round trip", "[duration]") {
  for (int64_t s : {0, 1, 59, 60, 61, 3599, 3600, 3615, 86399, 86400, 93615, 10 * 86400 + 7}) {
    INFO(s);
    CHECK(Secs(FormatDuration(s).c_str()) == s);
  }
}

uint64_t Mib(const char* s) {
  auto r = ParseMemMiB(s);
  INFO(s << " -> " << r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("memory sizes: units and defaults", "[duration][mem]") {
  CHECK(Mib("512") == 512);  // no suffix: MiB, as sbatch --mem
  CHECK(Mib("100M") == 100);
  CHECK(Mib("4G") == 4096);
  CHECK(Mib("4g") == 4096);
  CHECK(Mib("4GB") == 4096);
  CHECK(Mib("1T") == 1024 * 1024);
  CHECK(Mib("2048K") == 2);
  CHECK(Mib("1K") == 1);  // K rounds up to a whole MiB
  CHECK(Mib("1025K") == 2);
  CHECK(Mib("0") == 0);
}

TEST_CASE("memory sizes: malformed input is rejected", "[duration][mem]") {
  for (const char* bad : {"4X", "", "G", "-4G", "4.5G", "4 G", "4GG", "1B", "99999999999999T",
                          "1000000000000T", "1099511627776T"}) {
    auto r = ParseMemMiB(bad);
    INFO("\"" << bad << "\"");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK_THAT(r.status().message(), Catch::Contains("memory size"));
  }
  auto r = ParseMemMiB("4X");
  CHECK_THAT(r.status().message(), Catch::Contains("\"4X\""));
}

TEST_CASE("FormatMemMiB prints like Slurm", "[duration][mem]") {
  CHECK(FormatMemMiB(512) == "512M");
  CHECK(FormatMemMiB(4096) == "4G");
  CHECK(FormatMemMiB(1536) == "1.50G");
  CHECK(FormatMemMiB(1024 * 1024) == "1T");
  CHECK(FormatMemMiB(0) == "0M");
}

TEST_CASE("ParseUint must fill the whole string", "[duration]") {
  CHECK(*ParseUint("0", "x") == 0);
  CHECK(*ParseUint("123456", "x") == 123456);
  auto r = ParseUint("12a", "CPU count");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "invalid CPU count \"12a\"");
  CHECK_FALSE(ParseUint("", "x").ok());
  CHECK_FALSE(ParseUint("+1", "x").ok());
  CHECK_FALSE(ParseUint("1234567890123456789", "x").ok());  // 19 digits: bounded
}

TEST_CASE("FormatTimestamp", "[duration]") {
  CHECK(FormatTimestamp(0) == "N/A");
  CHECK(FormatTimestamp(0, true) == "Unknown");
  std::string s = FormatTimestamp(1700000000);
  REQUIRE(s.size() == 19);
  CHECK(s[4] == '-');
  CHECK(s[10] == 'T');
  CHECK(s.substr(0, 4) == "2023");
}

}  // namespace
}  // namespace tessera
