// Option, directive, time and signal parsing.
#include <catch2/catch.hpp>

#include "cli/lib/arg_parser.h"
#include "cli/lib/batch_script.h"
#include "cli/lib/signal_names.h"
#include "cli/lib/text_util.h"
#include "cli/lib/time_spec.h"
#include "fake_controller.h"

namespace tessera::cli {
namespace {

const std::vector<OptionSpec> kSpecs = {
    {"time", 't', ArgKind::kRequired, 1},  {"hold", 'H', ArgKind::kNone, 2},
    {"nice", 0, ArgKind::kOptional, 3},    {"nodes", 'N', ArgKind::kRequired, 4},
    {"noheader", 'h', ArgKind::kNone, 5},
};

TEST_CASE("ParseArgs accepts getopt_long spellings") {
  auto r = ParseArgs({"--time=60", "-t", "5", "-t7", "--time", "8", "-HN3", "--nice",
                      "--nice=5", "--ti=9"},
                     kSpecs, false);
  REQUIRE(r.ok());
  std::vector<std::string> values;
  for (const auto& o : r->options) values.push_back(o.name + "=" + o.value.value_or("-"));
  CHECK(values == std::vector<std::string>{"--time=60", "--time=5", "--time=7", "--time=8",
                                           "--hold=-", "--nodes=3", "--nice=-", "--nice=5",
                                           "--time=9"});
}

TEST_CASE("ParseArgs stops at the first positional when asked (sbatch script args)") {
  auto r = ParseArgs({"-t", "5", "job.sh", "-t", "x", "--", "y"}, kSpecs, true);
  REQUIRE(r.ok());
  CHECK(r->options.size() == 1);
  CHECK(r->positionals == std::vector<std::string>{"job.sh", "-t", "x", "--", "y"});
  auto mixed = ParseArgs({"12", "-H", "13"}, kSpecs, false);
  REQUIRE(mixed.ok());
  CHECK(mixed->positionals == std::vector<std::string>{"12", "13"});
}

TEST_CASE("ParseArgs errors name the option") {
  CHECK(ParseArgs({"--bogus"}, kSpecs, false).status().message() ==
        "unrecognized option '--bogus'");
  CHECK(ParseArgs({"-z"}, kSpecs, false).status().message() == "invalid option -- 'z'");
  CHECK(ParseArgs({"--time"}, kSpecs, false).status().message() ==
        "option '--time' requires an argument");
  CHECK(ParseArgs({"-t"}, kSpecs, false).status().message() ==
        "option requires an argument -- 't'");
  CHECK(ParseArgs({"--hold=1"}, kSpecs, false).status().message() ==
        "option '--hold' doesn't allow an argument");
  auto amb = ParseArgs({"--no"}, kSpecs, false);
  CHECK(amb.status().message().find("ambiguous") != std::string::npos);
}

TEST_CASE("Directives stop at the first command and skip ##SBATCH") {
  std::string script =
      "#!/bin/bash\n"
      "# a comment\n"
      "\n"
      "#SBATCH -N 2 --time=10   # trailing comment\n"
      "##SBATCH --partition=ignored\n"
      " #SBATCH --partition=indented-is-not-a-directive\n"
      "#SBATCH-J nospace\n"
      "#TESSERA --job-name \"two words\"\n"
      "echo start\n"
      "#SBATCH --partition=after-command\n";
  auto d = ExtractDirectives(script);
  REQUIRE(d.ok());
  REQUIRE(d->size() == 2);
  CHECK((*d)[0].line == 4);
  CHECK((*d)[0].words == std::vector<std::string>{"-N", "2", "--time=10"});
  CHECK((*d)[1].line == 8);
  CHECK((*d)[1].words == std::vector<std::string>{"--job-name", "two words"});
}

TEST_CASE("Directive quoting errors name the line") {
  auto d = ExtractDirectives("#!/bin/sh\n#SBATCH -J 'open\n");
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().message() == "script line 2: unterminated ' quote");
}

TEST_CASE("CheckBatchScript refuses what sbatch refuses") {
  CHECK(CheckBatchScript("#!/bin/sh\necho hi\n").ok());
  CHECK_FALSE(CheckBatchScript("").ok());
  CHECK_FALSE(CheckBatchScript("echo hi\n").ok());
  CHECK_FALSE(CheckBatchScript("#!/bin/sh\r\necho hi\r\n").ok());
  CHECK_FALSE(CheckBatchScript(std::string("#!/bin/sh\n\0", 11)).ok());
}

TEST_CASE("ParseTimeSpec understands Slurm's forms") {
  testing::UseUtc();
  const int64_t now = testing::kNow;  // 2023-11-14T22:13:20Z
  CHECK(*ParseTimeSpec("now", now) == now);
  CHECK(*ParseTimeSpec("now+60", now) == now + 60);
  CHECK(*ParseTimeSpec("now+2hours", now) == now + 7200);
  CHECK(*ParseTimeSpec("now-1day", now) == now - 86400);
  CHECK(*ParseTimeSpec("2023-11-15T08:00", now) == 1700035200);
  CHECK(*ParseTimeSpec("2023-11-15", now) == 1700006400);
  CHECK(*ParseTimeSpec("today", now) == 1699920000);
  CHECK(*ParseTimeSpec("tomorrow", now) == 1700006400);
  CHECK(*ParseTimeSpec("23:00", now) == 1699920000 + 23 * 3600);  // later today
  CHECK(*ParseTimeSpec("08:00", now) == 1700035200);              // passed: tomorrow
  CHECK(*ParseTimeSpec("11/15", now) == 1700006400);
  CHECK(LocalMidnight(now) == 1699920000);
  for (const char* bad : {"", "now+", "now+5parsecs", "2023-13-01", "25:00", "soon", "1/2/3/4"})
    CHECK_FALSE(ParseTimeSpec(bad, now).ok());
}

TEST_CASE("ParseSignal takes names and numbers") {
  CHECK(*ParseSignal("KILL") == 9);
  CHECK(*ParseSignal("sigusr1") == 10);
  CHECK(*ParseSignal("15") == 15);
  CHECK_FALSE(ParseSignal("FOO").ok());
  CHECK_FALSE(ParseSignal("0").ok());
  CHECK_FALSE(ParseSignal("65").ok());
}

TEST_CASE("PadField mirrors squeue's _print_str") {
  CHECK(PadField("abc", 5, true, true) == "  abc");
  CHECK(PadField("abc", 5, false, true) == "abc  ");
  CHECK(PadField("abcdefgh", 5, true, true) == "abcde");
  CHECK(PadField("abcdefgh", 5, false, false) == "abcdefgh");
  CHECK(PadField("abc", 0, true, true) == "abc");
  CHECK(SqueueSecs(65) == "1:05");
  CHECK(SqueueSecs(3725) == "1:02:05");
  CHECK(SqueueSecs(90061) == "1-01:01:01");
  CHECK(SqueueSecs(-1) == "INVALID");
  CHECK(SacctSecs(65) == "00:01:05");
  CHECK(SacctSecs(90061) == "1-01:01:01");
}

TEST_CASE("ParseJobIdList") {
  CHECK(*ParseJobIdList("12,13") == std::vector<uint64_t>{12, 13});
  CHECK(ParseJobIdList("12,x").status().message() == "invalid job id \"x\"");
  CHECK_FALSE(ParseJobIdList("0").ok());
}

}  // namespace
}  // namespace tessera::cli
