// Hardening issue, part 5: control characters in shown text, times within range, environments
// exec can take (common/control_chars.h, common/input_limits.h).
#include <catch2/catch.hpp>

#include <string>

#include "common/control_chars.h"
#include "common/env_block.h"
#include "common/input_limits.h"

namespace tessera {
namespace {

TEST_CASE("control characters are found with their position") {
  CHECK_FALSE(FindControlChar("train-\xc3\xa9t\xc3\xa9 v2"));  // UTF-8 letters are text
  auto esc = FindControlChar("ab\x1b[2Jc");
  REQUIRE(esc);
  CHECK(esc->position == 3);
  CHECK(esc->code == 0x1b);
  auto c1 = FindControlChar("x\xc2\x9b" "31m");  // U+009B, CSI as one character
  REQUIRE(c1);
  CHECK(c1->position == 2);
  CHECK(c1->code == 0x9b);
  CHECK(FindControlChar(std::string("a\0b", 3))->code == 0);
  CHECK(FindControlChar("del\x7f")->position == 4);
}

TEST_CASE("a field with a control character is refused, naming the field and position") {
  CHECK(CheckNoControlChars("job name", "plain name").ok());
  Status s = CheckNoControlChars("job name (--job-name)", "evil\x1b]0;pwned\x07");
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message() ==
        "job name (--job-name) contains a control character (ESC, 0x1b) at position 5; control "
        "characters are not allowed");
  CHECK(CheckNoControlChars("comment", "two\nlines").message().find("(newline, 0x0a) at position 4") !=
        std::string::npos);
  CHECK(CheckNoControlChars("comment", "x\xc2\x85").message().find("(U+0085) at position 2") !=
        std::string::npos);
}

TEST_CASE("control characters are escaped for output, other text is unchanged") {
  CHECK(EscapeControlChars("plain \xc3\xa9 back\\slash") == "plain \xc3\xa9 back\\slash");
  CHECK(EscapeControlChars("a\x1b[31mred\nfake line\r\t") == "a\\e[31mred\\nfake line\\r\\t");
  CHECK(EscapeControlChars(std::string("\x01\x7f\0", 3)) == "\\x01\\x7f\\x00");
  CHECK(EscapeControlChars("\xc2\x9b" "2J") == "\\u009b2J");
  CHECK(HasControlChars("a\nb"));
  CHECK_FALSE(HasControlChars("ab"));
}

TEST_CASE("times: at most 100 years ahead, never before 1970") {
  int64_t now = 1'700'000'000;
  CHECK(CheckTimeAhead("--begin", 0, now).ok());
  CHECK(CheckTimeAhead("--begin", now + 365 * 86400, now).ok());
  CHECK(CheckTimeAhead("--begin", now - 86400, now).ok());  // in the past: start at once
  Status far = CheckTimeAhead("--begin", now + 99999999999LL * 86400, now);
  CHECK(far.code() == Code::kInvalidArgument);
  CHECK(far.message().find("--begin: time is more than 100 years from now") == 0);
  CHECK_FALSE(CheckTimeAhead("--deadline", -5, now).ok());
  CHECK(CheckTimeLimit("--time", -1).ok());
  CHECK(CheckTimeLimit("--time", 0).ok());
  CHECK(CheckTimeLimit("--time", 365LL * 86400).ok());
  CHECK(CheckTimeLimit("--time", kMaxTimeLimitS + 1).message().find("more than 100 years") !=
        std::string::npos);
  CHECK_FALSE(CheckTimeLimit("--time", -7).ok());
}

TEST_CASE("an environment exec cannot take is refused, naming the limit") {
  std::vector<std::string_view> argv = {"/home/alice/job.sh"};
  std::string big;  // 300,000 variables, as `--export-file` can send them
  for (int i = 0; i < 300000; ++i) EnvBlockSet(&big, "V" + std::to_string(i), "x");
  Status s = CheckExecLimits(big, argv);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("environment and arguments too large to start the job: 300001 strings") == 0);
  CHECK(s.message().find("the limit is 2031616 bytes (exec's 2 MiB") != std::string::npos);

  std::string legit;  // a few hundred KiB: 2,000 variables of 200 bytes
  for (int i = 0; i < 2000; ++i) EnvBlockSet(&legit, "VAR_" + std::to_string(i), std::string(200, 'v'));
  CHECK(CheckExecLimits(legit, argv).ok());
  std::string one_long;  // MAX_ARG_STRLEN: 128 KiB per string, NUL included
  EnvBlockSet(&one_long, "LONG", std::string(kMaxArgStrlen - 6, 'x'));  // "LONG=" + value + NUL
  CHECK(CheckExecLimits(one_long, argv).ok());
  EnvBlockSet(&one_long, "LONG", std::string(kMaxArgStrlen, 'x'));
  CHECK(CheckExecLimits(one_long, argv).message().find(
            "environment variable LONG is 131077 bytes (NAME=VALUE); exec takes at most 131071 "
            "bytes per variable (MAX_ARG_STRLEN)") == 0);
}

TEST_CASE("exec size counts the last value of a variable once") {
  std::string env;
  EnvBlockSet(&env, "A", "1");
  EnvBlockSet(&env, "A", "22");
  EnvBlockSet(&env, "B", "3");
  ExecSize s = MeasureExec(env, {"prog"});
  CHECK(s.strings == 3);
  CHECK(s.bytes == (5 + 8) + (5 + 8) + (4 + 8));
}

}  // namespace
}  // namespace tessera
