// Issue 19 (h19 s7): srun -i all | -i TASKID on the node: forward_stdin tasks read trun's stdin
// from a pipe fed by TaskSet::Input (EOF closes it); the others read /dev/null; a task that does
// not read holds the input back (UNAVAILABLE) instead of noded buffering without end. Real
// processes.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "noded/task_set.h"
#include "noded/task_stdin.h"
#include "tests/unit/noded/task_set_fixture.h"

namespace tessera::noded {
namespace {

namespace v1 = tessera::v1;

TaskPlan Plan(const std::string& script, std::vector<uint32_t> ranks,
              std::vector<uint32_t> forwarded) {
  ::signal(SIGPIPE, SIG_IGN);  // as noded
  TaskPlan p = testing::BashPlan(script, ranks);
  for (auto& t : p.tasks)
    t.forward_stdin = std::find(forwarded.begin(), forwarded.end(), t.rank) != forwarded.end();
  return p;
}

using Out = testing::TaskOut;
using testing::RunWith;

v1::StepInput In(const std::string& s, bool eof = false) {
  v1::StepInput in;
  in.set_data(s);
  in.set_eof(eof);
  return in;
}

}  // namespace

TEST_CASE("TaskSet -i all: every forwarded task reads the input, EOF ends it", "[step][stdin]") {
  TaskSet set(Plan("[ -p /dev/stdin ] && echo pipe; cat; echo end$R", {0, 1}, {0, 1}), nullptr);
  REQUIRE(set.Start().ok());
  Out out;
  RunWith(set, out, [&] {
    REQUIRE(set.Input(In("")).ok());  // names the step only
    REQUIRE(set.Input(In("hi\n")).ok());
    REQUIRE(set.Input(In("there\n", true)).ok());
  });
  CHECK(out.Of(0) == "pipe\nhi\nthere\nend0\n");
  CHECK(out.Of(1) == "pipe\nhi\nthere\nend1\n");
  CHECK(out.exit_code[0] == 0);
}

TEST_CASE("TaskSet -i N: only that task reads the input; the others read /dev/null",
          "[step][stdin]") {
  TaskSet set(Plan("echo got=$(cat)", {0, 1}, {1}), nullptr);
  REQUIRE(set.Start().ok());
  Out out;
  RunWith(set, out, [&] { REQUIRE(set.Input(In("one\n", true)).ok()); });
  CHECK(out.Of(0) == "got=\n");
  CHECK(out.Of(1) == "got=one\n");
}

TEST_CASE("TaskSet stdin: a task that does not read holds the input back; one that ended "
          "drops it", "[step][stdin]") {
  TaskSet set(Plan("if [ $R = 0 ]; then exec 0<&-; exit 0; fi; read -r x; sleep 1; "
                   "echo n=$(wc -c)", {0, 1}, {0, 1}), nullptr);
  REQUIRE(set.Start().ok());
  Out out;
  RunWith(set, out, [&] {
    REQUIRE(set.Input(In("first\n")).ok());
    std::string chunk(64 * 1024, 'x');
    int refused = 0;
    for (int i = 0; i < 200 && refused == 0; ++i) {  // rank 1 sleeps: its pipe fills up
      Status st = set.Input(In(chunk));
      if (st.code() == Code::kUnavailable) ++refused;
      else REQUIRE(st.ok());
    }
    CHECK(refused == 1);
    Status st;  // once it reads again the input goes through
    for (int i = 0; i < 300; ++i) {
      st = set.Input(In("tail\n", true));
      if (st.code() != Code::kUnavailable) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK(st.ok());
  });
  CHECK(out.exit_code[0] == 0);  // closed its stdin and ended: no SIGPIPE for noded
  CHECK(out.exit_code[1] == 0);
  CHECK(out.Of(1).rfind("n=", 0) == 0);
}

TEST_CASE("TaskSet::Input without a forwarded task or a terminal is refused", "[step][stdin]") {
  TaskSet set(Plan("true", {0}, {}), nullptr);
  REQUIRE(set.Start().ok());
  CHECK(set.Input(In("x")).code() == Code::kFailedPrecondition);
  Out out;
  RunWith(set, out, [] {});
}

}  // namespace tessera::noded
