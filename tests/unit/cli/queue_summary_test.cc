// tqueue's columnar fast path (queue_summary.h) must print exactly what the JobInfo path prints.
#include <catch2/catch.hpp>

#include <map>

#include "cli/lib/job_view.h"
#include "cli/lib/queue_format.h"
#include "cli/lib/queue_summary.h"
#include "fake_controller.h"

namespace tessera::cli {
namespace {

using testing::kNow;

pb::JobInfo Job(uint64_t id, pb::JobState st, const std::string& part, uint32_t prio) {
  pb::JobInfo j;
  j.set_job_id(id);
  j.set_uid(1001);
  j.set_user("alice");
  j.set_state(st);
  j.set_priority(prio);
  j.set_submit_time(kNow - 500);
  j.set_partition(part);
  j.set_time_limit_s(3600);
  j.mutable_spec()->set_name("job" + std::to_string(id));
  auto* g = j.mutable_spec()->add_task_groups();
  g->set_count(2);
  g->mutable_per_task()->set_cpus(3);
  return j;
}

// A varied queue: running, pending with and without reasons, held, arrays, finished jobs,
// unknown limits, a user without a name, requested-only partition and account.
std::vector<pb::JobInfo> Queue() {
  std::vector<pb::JobInfo> q;
  auto r = Job(10, pb::RUNNING, "gpu", 100);
  r.set_start_time(kNow - 3725);
  r.set_nodelist("n[1-2]");
  r.set_num_cpus(8);
  for (const char* n : {"n1", "n2"}) r.add_alloc()->set_node(n);
  r.set_account("research");
  q.push_back(r);
  auto p = Job(11, pb::PENDING, "gpu", 500);
  p.set_reason("Resources");
  p.set_expected_start_time(kNow + 600);
  p.set_time_limit_s(-1);
  q.push_back(p);
  auto held = Job(12, pb::PENDING, "debug", 0);
  held.set_reason("JobHeldUser");
  held.set_time_limit_s(0);
  held.mutable_spec()->set_time_limit_s(0);
  held.clear_user();
  held.set_uid(4242);  // no name: the uid is printed
  q.push_back(held);
  auto noreason = Job(13, pb::PENDING, "", 500);
  noreason.mutable_spec()->set_partition("debug");  // only requested
  noreason.mutable_spec()->set_account("physics");
  noreason.mutable_spec()->set_nodes_min(3);
  q.push_back(noreason);
  auto arr = Job(20, pb::PENDING, "debug", 500);
  arr.set_array_job_id(20);
  arr.set_array_task_str("0-15%4");
  arr.set_reason("Priority");
  q.push_back(arr);
  auto elem = Job(37, pb::RUNNING, "debug", 500);
  elem.set_array_job_id(20);
  elem.set_array_task_id(17);
  elem.set_start_time(kNow - 30);
  elem.set_nodelist("n3");
  elem.add_alloc()->set_node("n3");
  q.push_back(elem);
  auto done = Job(5, pb::COMPLETED, "debug", 0);
  done.set_start_time(kNow - 900);
  done.set_end_time(kNow - 100);
  done.set_nodelist("n4");
  done.add_alloc()->set_node("n4");
  q.push_back(done);
  auto failed = Job(6, pb::FAILED, "debug", 0);
  failed.set_reason("NonZeroExitCode");
  failed.set_start_time(kNow - 50);
  failed.set_end_time(kNow - 40);
  q.push_back(failed);
  auto unlimited = Job(14, pb::RUNNING, "gpu", 100);
  unlimited.set_time_limit_s(-1);
  unlimited.set_start_time(kNow - 10);
  unlimited.set_nodelist("n5");
  unlimited.add_alloc()->set_node("n5");
  q.push_back(unlimited);
  return q;
}

uint32_t Intern(pb::JobSummaries& s, std::map<std::string, uint32_t>& idx, const std::string& v) {
  if (v.empty()) return 0;
  auto [it, added] = idx.emplace(v, static_cast<uint32_t>(s.strings_size()));
  if (added) s.add_strings(v);
  return it->second;
}

// What the controller sends for these jobs (ctld/rpc/job_listing.cc computes the same values
// from its records).
pb::JobSummaries ToSummary(const std::vector<pb::JobInfo>& jobs) {
  pb::JobSummaries s;
  s.add_strings("");
  std::map<std::string, uint32_t> idx;
  for (const auto& j : jobs) {
    s.add_job_id(j.job_id());
    s.add_array_job_id(j.array_job_id());
    s.add_array_task_id(j.array_task_id());
    s.add_array_task_str(Intern(s, idx, j.array_task_str()));
    s.add_state(j.state());
    s.add_name(Intern(s, idx, j.spec().name()));
    s.add_uid(j.uid());
    s.add_user(Intern(s, idx, j.user()));
    s.add_partition(Intern(s, idx, PartitionOf(j)));
    s.add_reason(Intern(s, idx, j.reason()));
    s.add_nodelist(Intern(s, idx, j.nodelist()));
    s.add_account(Intern(s, idx, AccountOf(j)));
    s.add_priority(j.priority());
    s.add_submit_time(j.submit_time());
    s.add_start_time(j.start_time());
    s.add_end_time(j.end_time());
    s.add_time_limit_s(TimeLimitOf(j));
    s.add_expected_start_time(j.expected_start_time());
    s.add_num_nodes(NodeCount(j));
    s.add_num_cpus(CpuCount(j));
  }
  return s;
}

std::string ViaJobInfo(std::vector<pb::JobInfo> jobs, const QueueFormat& fmt, bool header,
                       const IdNames& names) {
  SortQueue(jobs);
  return FormatQueue(jobs, fmt, header, names, kNow);
}

std::string ViaSummary(const pb::JobSummaries& s, const SummaryFilter& f, const QueueFormat& fmt,
                       bool header, const IdNames& names) {
  std::string out;
  Status st = FormatSummaryQueue(s, f, fmt, header, names, kNow, &out);
  REQUIRE(st.ok());
  return out;
}

TEST_CASE("tqueue summary path prints what the JobInfo path prints") {
  testing::UseUtc();
  FakeIdNames names;
  names.AddUser(1001, "alice");
  auto jobs = Queue();
  pb::JobSummaries s = ToSummary(jobs);
  // (--start's format has %Y, SCHEDNODES, since issue 19: it takes the JobInfo path)
  for (const char* f : {kDefaultQueueFormat, kLongQueueFormat, "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %R",
                        "%i|%A|%F|%K|%j|%u|%U|%t|%T|%M|%l|%L|%D|%C|%P|%R|%r|%N|%V|%S|%e|%a|%Q|%p",
                        "%5i %.3j %4u %.20R %2P%%x %.1t", "prefix %.30e %10S %.4N end"}) {
    INFO(f);
    auto fmt = ParseQueueFormat(f);
    REQUIRE(fmt.ok());
    REQUIRE(SummaryCovers(*fmt));
    for (bool header : {true, false})
      CHECK(ViaSummary(s, {}, *fmt, header, names) == ViaJobInfo(jobs, *fmt, header, names));
  }
  auto longf = ParseQueueLongFormat("JobID,Name:.5,UserName,State,TimeUsed,TimeLeft,NumNodes,"
                                    "NumCPUs,Partition,ReasonList,StartTime:30,Priority");
  REQUIRE(longf.ok());
  REQUIRE(SummaryCovers(*longf));
  CHECK(ViaSummary(s, {}, *longf, true, names) == ViaJobInfo(jobs, *longf, true, names));
}

TEST_CASE("tqueue summary path: fields it cannot print are left to the JobInfo path") {
  for (const char* f : {"%i %o", "%Z", "%b", "%k", "%q", "%c %m", "%Y"}) {
    auto fmt = ParseQueueFormat(f);
    REQUIRE(fmt.ok());
    CHECK_FALSE(SummaryCovers(*fmt));
  }
  auto tasks = ParseQueueLongFormat("JobID,NumTasks");
  REQUIRE(tasks.ok());
  CHECK_FALSE(SummaryCovers(*tasks));
}

TEST_CASE("tqueue summary path filters again like the JobInfo path") {
  testing::UseUtc();
  FakeIdNames names;
  auto jobs = Queue();
  pb::JobSummaries s = ToSummary(jobs);
  auto fmt = ParseQueueFormat("%i %j %P %a %t");
  REQUIRE(fmt.ok());
  SummaryFilter f;
  f.names = {"job11", "job13", "nosuch"};
  CHECK(ViaSummary(s, f, *fmt, false, names) == "13 job13 debug physics PD\n11 job11 gpu (null) PD\n");
  f = {};
  f.partitions = {"gpu"};
  f.states = {pb::RUNNING};
  CHECK(ViaSummary(s, f, *fmt, false, names) == "10 job10 gpu research R\n14 job14 gpu (null) R\n");
  f = {};
  f.accounts = {"physics"};
  f.job_ids = {13, 99};
  CHECK(ViaSummary(s, f, *fmt, false, names) == "13 job13 debug physics PD\n");
  f = {};
  f.uids = {4242};
  CHECK(ViaSummary(s, f, *fmt, false, names) == "12 job12 debug (null) PD\n");
  CHECK(ViaSummary(pb::JobSummaries(), {}, *fmt, true, names) == "JOBID NAME PARTITION ACCOUNT ST\n");
}

TEST_CASE("tqueue summary path refuses a malformed summary, naming the column") {
  FakeIdNames names;
  auto fmt = ParseQueueFormat(kDefaultQueueFormat);
  REQUIRE(fmt.ok());
  pb::JobSummaries s = ToSummary(Queue());
  std::string out;
  pb::JobSummaries short_col = s;
  short_col.mutable_state()->RemoveLast();
  Status st = FormatSummaryQueue(short_col, {}, *fmt, true, names, kNow, &out);
  CHECK(st.code() == Code::kInvalidArgument);
  CHECK(st.message().find("column state") != std::string::npos);
  pb::JobSummaries bad_index = s;
  bad_index.set_name(0, 9999);
  st = FormatSummaryQueue(bad_index, {}, *fmt, true, names, kNow, &out);
  CHECK(st.code() == Code::kInvalidArgument);
  CHECK(st.message().find("column name") != std::string::npos);
  CHECK(out.empty());
}

}  // namespace
}  // namespace tessera::cli
