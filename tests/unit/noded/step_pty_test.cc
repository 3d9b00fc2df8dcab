// Issue 19 (h19 s6): trun --pty's node side: rank 0 of a TaskSet on a pseudo-terminal, with
// input, window size and end-of-file through TaskSet::Input; real processes.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "noded/task_set.h"
#include "tests/unit/noded/task_set_fixture.h"

namespace tessera::noded {
namespace {

namespace v1 = tessera::v1;

TaskPlan PtyPlan(const std::string& script, std::vector<uint32_t> ranks) {
  TaskPlan p = testing::BashPlan(script, ranks);
  p.pty = true;
  p.pty_rows = 33;
  p.pty_cols = 101;
  return p;
}

using Out = testing::TaskOut;
using testing::RunWith;

bool WaitFor(Out& out, uint32_t rank, const std::string& text) {
  for (int i = 0; i < 200; ++i) {
    if (out.Of(rank).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

v1::StepInput Typed(const std::string& s) {
  v1::StepInput in;
  in.set_data(s);
  return in;
}

TEST_CASE("TaskSet --pty: rank 0 gets a terminal with the window size and typed input", "[step][pty]") {
  TaskSet set(PtyPlan("if [ -t 0 ] && [ -t 1 ] && [ -t 2 ]; then echo on-tty; fi; "
                      "[ -t 1 ] || echo rank$R-not-tty; stty size; read line; echo got=$line; "
                      "stty size; exit 6", {0, 1}), nullptr);
  REQUIRE(set.Start().ok());
  Out out;
  RunWith(set, out, [&] {
    REQUIRE(WaitFor(out, 0, "33 101"));
    v1::StepInput resize;
    resize.set_rows(40);
    resize.set_cols(120);
    REQUIRE(set.Input(resize).ok());
    REQUIRE(set.Input(Typed("hello pty\n")).ok());
  });
  std::string o = out.Of(0);
  CHECK(o.find("on-tty\r\n") != std::string::npos);  // the terminal's onlcr: CR LF
  CHECK(o.find("hello pty\r\n") != std::string::npos);  // echoed by the terminal
  CHECK(o.find("got=hello pty\r\n40 120\r\n") != std::string::npos);
  CHECK(out.exit_code[0] == 6);
  // Rank 1 has no terminal: pipes as without --pty.
  CHECK(out.Of(1).find("rank1-not-tty\n") != std::string::npos);
  CHECK(out.exit_code[1] == 6);
}

TEST_CASE("TaskSet --pty: EOF ends the task's input; Ctrl-C interrupts its foreground job", "[step][pty]") {
  TaskSet set(PtyPlan("cat > /dev/null; echo cat-ended; "
                      "trap 'echo got-int' INT; sleep 5 & wait; echo waited", {0}), nullptr);
  REQUIRE(set.Start().ok());
  Out out;
  RunWith(set, out, [&] {
    REQUIRE(set.Input(Typed("some text\n")).ok());
    v1::StepInput eof;
    eof.set_eof(true);
    REQUIRE(set.Input(eof).ok());
    REQUIRE(WaitFor(out, 0, "cat-ended"));
    REQUIRE(set.Input(Typed("\x03")).ok());  // the terminal turns ^C into SIGINT
  });
  CHECK(out.Of(0).find("got-int") != std::string::npos);
  CHECK(out.exit_code[0] == 0);
}

TEST_CASE("TaskSet::Input without a terminal is refused", "[step][pty]") {
  TaskPlan p = PtyPlan("true", {0});
  p.pty = false;
  TaskSet set(p, nullptr);
  REQUIRE(set.Start().ok());
  CHECK(set.Input(Typed("x")).code() == Code::kFailedPrecondition);
  Out out;
  RunWith(set, out, [] {});
}

}  // namespace
}  // namespace tessera::noded
