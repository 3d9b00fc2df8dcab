// Hardening issue, part 5: control characters stored in names, comments and reasons (by older
// versions, or in node reasons) are escaped by every output; tbatch refuses times out of range
// and environments exec cannot take before contacting the controller.
#include <catch2/catch.hpp>

#include <map>

#include "cli/lib/acct_format.h"
#include "cli/lib/command.h"
#include "cli/lib/info_format.h"
#include "cli/lib/job_view.h"
#include "cli/lib/queue_format.h"
#include "cli/lib/queue_summary.h"
#include "cli/lib/show_format.h"
#include "fake_controller.h"

namespace tessera::cli {
namespace {

using testing::kNow;

constexpr char kEvilName[] = "x\x1b[2J\x1b]0;pwned\x07";
constexpr char kEscapedName[] = "x\\e[2J\\e]0;pwned\\x07";

pb::JobInfo EvilJob() {
  pb::JobInfo j;
  j.set_job_id(7);
  j.set_uid(1002);
  j.set_user("bob");
  j.set_state(pb::FAILED);
  j.set_reason("bad\nroot   42   R");
  j.set_submit_time(kNow - 100);
  j.set_partition("debug");
  j.set_time_limit_s(60);
  j.mutable_spec()->set_name(kEvilName);
  j.mutable_spec()->set_comment("line1\nFAKE");
  j.mutable_spec()->set_workdir("/tmp/w");
  j.mutable_spec()->add_task_groups()->set_count(1);
  return j;
}

bool NoControl(const std::string& out) {
  for (char c : out)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) return false;
  return true;
}

TEST_CASE("tqueue escapes control characters, in both of its paths") {
  FakeIdNames names;
  auto fmt = ParseQueueFormat("%i|%j|%R");
  REQUIRE(fmt.ok());
  std::string out = FormatQueue({EvilJob()}, *fmt, false, names, kNow);
  CHECK(out == std::string("7|") + kEscapedName + "|(bad\\nroot   42   R)\n");

  pb::JobSummaries s;  // the columnar fast path
  s.add_strings("");
  s.add_strings(kEvilName);
  s.add_strings("bob");
  s.add_strings("debug");
  s.add_strings("bad\nroot   42   R");
  s.add_job_id(7);
  s.add_array_job_id(0);
  s.add_array_task_id(0);
  s.add_array_task_str(0);
  s.add_state(pb::FAILED);
  s.add_name(1);
  s.add_uid(1002);
  s.add_user(2);
  s.add_partition(3);
  s.add_reason(4);
  s.add_nodelist(0);
  s.add_account(0);
  s.add_priority(0);
  s.add_submit_time(kNow - 100);
  s.add_start_time(0);
  s.add_end_time(0);
  s.add_time_limit_s(60);
  s.add_expected_start_time(0);
  s.add_num_nodes(1);
  s.add_num_cpus(1);
  std::string fast;
  REQUIRE(FormatSummaryQueue(s, {}, *fmt, false, names, kNow, &fast).ok());
  CHECK(fast == out);
}

TEST_CASE("tcontrol show job escapes every free-text field; the reason is one word") {
  testing::UseUtc();
  FakeIdNames names;
  std::string out = FormatJobDetail(EvilJob(), names, kNow);
  CHECK(NoControl(out));
  CHECK(out.find(std::string("JobName=") + kEscapedName + "\n") != std::string::npos);
  CHECK(out.find("Reason=bad\\nroot___42___R ") != std::string::npos);
  CHECK(out.find("Comment=line1\\nFAKE \n") != std::string::npos);  // scontrol's trailing blank
  pb::JobInfo failed = EvilJob();
  failed.set_reason("couldn't chdir to `/nonexistent': No such file or directory");
  CHECK(FormatJobDetail(failed, names, kNow)
            .find("Reason=couldn't_chdir_to_`/nonexistent':_No_such_file_or_directory ") !=
        std::string::npos);
}

TEST_CASE("tacct escapes control characters") {
  FakeIdNames names;
  auto cols = ParseAcctFields("JobID,JobName,Comment,Reason");
  REQUIRE(cols.ok());
  std::string out = FormatAcct({EvilJob()}, *cols, AcctLayout::kParsable2, false, names, kNow);
  CHECK(out == std::string("7|") + kEscapedName + "|line1\\nFAKE|bad\\nroot   42   R\n");
}

TEST_CASE("tinfo -R and tcontrol show node escape node reasons") {
  pb::PartitionInfo p;
  p.set_name("debug");
  p.set_is_default(true);
  p.set_up(true);
  p.set_nodes("n1");
  pb::NodeInfo n;
  n.set_name("n1");
  n.add_partitions("debug");
  n.set_state(pb::NODE_DRAINED);
  n.set_reason("disk\x1b[31m bad");
  InfoOptions r;
  r.list_reasons = true;
  r.header = false;
  std::string out = FormatInfo({p}, {n}, r);
  CHECK(out.find("disk\\e[31m bad") == 0);
  CHECK(NoControl(out));
  CHECK(FormatNodeDetail(n).find("Reason=disk\\e[31m bad\n") != std::string::npos);
}

TEST_CASE("tbatch refuses times beyond 100 years before submitting") {
  testing::CommandRun r;
  CHECK(r.Run(RunTbatch, {"--begin=now+99999999999days", "--wrap", "true"}) == 1);
  CHECK(r.err ==
        "tcmd: error: invalid --begin value \"now+99999999999days\" (times must lie between 1970 "
        "and 100 years from now) (see tbatch --help)\n");
  CHECK(r.Run(RunTbatch, {"--deadline=now+999999999999999999weeks", "--wrap", "true"}) == 1);
  CHECK(r.Run(RunTbatch, {"-t", "50000-0", "--wrap", "true"}) == 1);
  CHECK(r.err.find("invalid --time value \"50000-0\" (more than 100 years") != std::string::npos);
  CHECK(r.ctld.SubmitJob_calls.empty());
  REQUIRE(r.Run(RunTbatch, {"--begin=now+30days", "-t", "30-0", "--wrap", "true"}) == 0);
  CHECK(r.ctld.SubmitJob_calls.size() == 1);
}

TEST_CASE("tbatch refuses an environment exec cannot take, naming the limit") {
  testing::CommandRun r;
  std::string vars;
  for (int i = 0; i < 300000; ++i) vars += "V" + std::to_string(i) + "=x\n";
  r.files["/home/alice/work/vars"] = vars;
  CHECK(r.Run(RunTbatch, {"--export-file=vars", "--wrap", "true"}) == 1);
  CHECK(r.err.find("tcmd: error: environment and arguments too large to start the job") == 0);
  CHECK(r.err.find("the limit is 2031616 bytes") != std::string::npos);
  CHECK(r.ctld.SubmitJob_calls.empty());
  std::string legit;  // ~400 KiB
  for (int i = 0; i < 2000; ++i) legit += "VAR_" + std::to_string(i) + "=" + std::string(200, 'v') + "\n";
  r.files["/home/alice/work/vars"] = legit;
  REQUIRE(r.Run(RunTbatch, {"--export-file=vars", "--wrap", "true"}) == 0);
  CHECK(r.ctld.SubmitJob_calls.size() == 1);
}

}  // namespace
}  // namespace tessera::cli
