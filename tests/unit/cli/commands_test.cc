// tqueue, tcancel, tinfo, tcontrol and tacct against a fake controller: the requests they build,
// what they print, and their exit status.
#include <catch2/catch.hpp>

#include "fake_controller.h"

namespace tessera::cli {
namespace {

using testing::CommandRun;
using testing::kNow;

pb::JobInfo Job(uint64_t id, uint32_t uid, pb::JobState state, const std::string& part) {
  pb::JobInfo j;
  j.set_job_id(id);
  j.set_uid(uid);
  j.set_state(state);
  j.set_partition(part);
  j.mutable_spec()->set_name("j" + std::to_string(id));
  return j;
}

TEST_CASE("tqueue builds the filter and filters the answer again") {
  CommandRun r;
  auto* jobs = r.ctld.ListJobs_result->mutable_jobs();
  *jobs->Add() = Job(1, 1001, pb::RUNNING, "debug");
  *jobs->Add() = Job(2, 1002, pb::PENDING, "debug");
  *jobs->Add() = Job(3, 1001, pb::COMPLETED, "debug");
  REQUIRE(r.Run(RunTqueue, {"--me", "-h", "-o", "%i %t"}) == 0);
  CHECK(r.out == "1 R\n");
  const auto& req = r.ctld.ListJobs_calls.at(0);
  CHECK(std::vector<uint32_t>(req.uids().begin(), req.uids().end()) == std::vector<uint32_t>{1001});
  CHECK(req.states_size() == 4);
  CHECK_FALSE(req.include_finished());

  REQUIRE(r.Run(RunTqueue, {"-u", "bob,alice", "-t", "PD,cd", "-h", "-o", "%i"}) == 0);
  CHECK(r.out == "2\n3\n");
  CHECK(r.ctld.ListJobs_calls.at(1).include_finished());

  REQUIRE(r.Run(RunTqueue, {"-j", "3", "-h", "--format=%i %T"}) == 0);
  CHECK(r.out == "3 COMPLETED\n");
  CHECK(r.ctld.ListJobs_calls.at(2).include_finished());
  CHECK(r.ctld.ListJobs_calls.at(2).states_size() == 0);
}

TEST_CASE("tqueue errors") {
  CommandRun r;
  CHECK(r.Run(RunTqueue, {"-u", "nosuchuser"}) == 1);
  CHECK(r.err == "tcmd: error: invalid user: \"nosuchuser\"\n");
  CHECK(r.Run(RunTqueue, {"-t", "XX"}) == 1);
  CHECK(r.err == "tcmd: error: invalid job state specified: XX\n");
  CHECK(r.Run(RunTqueue, {"-o", "%i %!"}) == 1);
  CHECK(r.connects == 0);
  r.ctld.ListJobs_result = Unavailable("cannot reach tessera-ctld at h:6817: connection refused");
  CHECK(r.Run(RunTqueue, {}) == 1);
  CHECK(r.err == "tcmd: error: cannot reach tessera-ctld at h:6817: connection refused\n");
}

TEST_CASE("tqueue -l prints a date line and the long format") {
  testing::UseUtc();
  CommandRun r;
  *r.ctld.ListJobs_result->add_jobs() = Job(5, 1001, pb::RUNNING, "debug");
  REQUIRE(r.Run(RunTqueue, {"-l"}) == 0);
  CHECK(r.out.rfind("Tue Nov 14 22:13:20 2023\n"
                    "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI"
                    "  NODES NODELIST(REASON)\n",
                    0) == 0);
}

TEST_CASE("tcancel: ids, filters, signal, and per-job errors") {
  CommandRun r;
  REQUIRE(r.Run(RunTcancel, {"12,13", "14", "-s", "USR1"}) == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());
  const auto& req = r.ctld.CancelJob_calls.at(0);
  CHECK(std::vector<uint64_t>(req.job_ids().begin(), req.job_ids().end()) ==
        std::vector<uint64_t>{12, 13, 14});
  CHECK(req.signal() == 10);

  REQUIRE(r.Run(RunTcancel, {"-u", "bob", "-t", "PD", "-p", "gpu", "-n", "x"}) == 0);
  const auto& f = r.ctld.CancelJob_calls.at(1);
  CHECK(f.user() == "bob");
  CHECK(f.state() == pb::PENDING);
  CHECK(f.partition() == "gpu");
  CHECK(f.name() == "x");

  r.ctld.CancelJob_result->add_cancelled(12);
  r.ctld.CancelJob_result->add_errors("13: Access/permission denied");
  r.ctld.CancelJob_result->add_errors("Kill job error on job id 14: Invalid job id specified");
  CHECK(r.Run(RunTcancel, {"12", "13", "14"}) == 1);
  CHECK(r.err ==
        "tcmd: error: Kill job error on job id 13: Access/permission denied\n"
        "tcmd: error: Kill job error on job id 14: Invalid job id specified\n");
}

TEST_CASE("tcancel refuses what it cannot send") {
  CommandRun r;
  CHECK(r.Run(RunTcancel, {}) == 1);
  CHECK(r.err.find("No job identification provided") != std::string::npos);
  CHECK(r.Run(RunTcancel, {"abc"}) == 1);
  CHECK(r.Run(RunTcancel, {"-s", "NOPE", "5"}) == 1);
  CHECK(r.err == "tcmd: error: invalid signal \"NOPE\"\n");
  CHECK(r.ctld.CancelJob_calls.empty());
}

TEST_CASE("tinfo asks for partitions and nodes and checks -p") {
  CommandRun r;
  auto* p = r.ctld.ListPartitions_result->add_partitions();
  p->set_name("debug");
  p->set_up(true);
  p->set_max_time_s(3600);
  REQUIRE(r.Run(RunTinfo, {}) == 0);
  CHECK(r.out ==
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
        "debug        up    1:00:00      0    n/a \n");
  CHECK(r.Run(RunTinfo, {"-p", "nope"}) == 1);
  CHECK(r.err == "tcmd: error: invalid partition name specified: nope\n");
}

// Issue 20 §2: the default view asks ctld's node-state summary; the rows print as the node
// records print them. -N (and the other views) still ask for the records.
TEST_CASE("tinfo's default view from the node-state summary is the records' view") {
  CommandRun rec, sum;
  for (CommandRun* r : {&rec, &sum}) {
    for (const char* name : {"debug", "gpu"}) {
      auto* p = r->ctld.ListPartitions_result->add_partitions();
      p->set_name(name);
      p->set_up(true);
      p->set_is_default(std::string(name) == "debug");
      p->set_max_time_s(3600);
    }
  }
  struct N {
    const char* name;
    pb::NodeState state;
    std::vector<const char*> parts;
  };
  for (const N& n : std::vector<N>{{"n10", pb::NODE_IDLE, {"debug"}},
                                   {"n2", pb::NODE_IDLE, {"debug"}},
                                   {"n3", pb::NODE_ALLOCATED, {"debug", "gpu"}},
                                   {"n1", pb::NODE_IDLE, {"debug"}},
                                   {"n4", pb::NODE_DRAINED, {"gpu"}}}) {
    auto* ni = rec.ctld.ListNodes_result->add_nodes();
    ni->set_name(n.name);
    ni->set_state(n.state);
    for (const char* p : n.parts) ni->add_partitions(p);
  }
  auto group = [&](const char* part, pb::NodeState st, uint32_t count, const char* nodes) {
    auto* g = sum.ctld.ListNodes_result->add_groups();
    g->set_partition(part);
    g->set_state(st);
    g->set_count(count);
    g->set_nodes(nodes);
  };
  group("debug", pb::NODE_ALLOCATED, 1, "n3");
  group("debug", pb::NODE_IDLE, 3, "n[1-2,10]");
  group("gpu", pb::NODE_ALLOCATED, 1, "n3");
  group("gpu", pb::NODE_DRAINED, 1, "n4");
  sum.ctld.ListNodes_result->set_generation(7);
  for (const auto& args :
       std::vector<std::vector<std::string>>{{}, {"-t", "idle"}, {"-p", "gpu"}, {"-h"}}) {
    REQUIRE(rec.Run(RunTinfo, args) == 0);
    REQUIRE(sum.Run(RunTinfo, args) == 0);
    CHECK(sum.out == rec.out);
    CHECK(sum.ctld.ListNodes_calls.back().state_summary());
  }
  CHECK(sum.out == "debug*       up    1:00:00      1  alloc n3\n"
                   "debug*       up    1:00:00      3   idle n[1-2,10]\n"
                   "gpu          up    1:00:00      1  alloc n3\n"
                   "gpu          up    1:00:00      1  drain n4\n");
  REQUIRE(rec.Run(RunTinfo, {"-N"}) == 0);
  CHECK_FALSE(rec.ctld.ListNodes_calls.back().state_summary());
}

TEST_CASE("tcontrol hold/release of many ids is one UpdateJob; requeue is one per id") {
  CommandRun r;
  REQUIRE(r.Run(RunTcontrol, {"hold", "5,6"}) == 0);
  REQUIRE(r.Run(RunTcontrol, {"release", "5"}) == 0);
  REQUIRE(r.Run(RunTcontrol, {"requeue", "7"}) == 0);
  const auto& c = r.ctld.UpdateJob_calls;
  REQUIRE(c.size() == 3);
  CHECK(c[0].action() == pb::UpdateJobRequest::HOLD);
  CHECK(std::vector<uint64_t>(c[0].job_ids().begin(), c[0].job_ids().end()) ==
        std::vector<uint64_t>{5, 6});
  CHECK(c[1].job_id() == 5);
  CHECK(c[1].action() == pb::UpdateJobRequest::RELEASE);
  CHECK(c[2].action() == pb::UpdateJobRequest::REQUEUE);
  CHECK(c[2].priority() == -1);
  r.ctld.UpdateJob_result = FailedPrecondition("job 5 is not held");
  CHECK(r.Run(RunTcontrol, {"release", "5"}) == 1);
  CHECK(r.err == "tcmd: error: job 5: job 5 is not held\n");
  // Several ids: the jobs the controller could not change are named, the exit is 1.
  pb::UpdateJobResponse partly;
  partly.add_errors("6: Job 6 is not held");
  r.ctld.UpdateJob_result = partly;
  CHECK(r.Run(RunTcontrol, {"release", "5,6"}) == 1);
  CHECK(r.err == "tcmd: error: job 6: Job 6 is not held\n");
}

TEST_CASE("tcontrol update job and node") {
  CommandRun r;
  REQUIRE(r.Run(RunTcontrol, {"update", "job", "9", "TimeLimit=2:00:00", "comment=hi",
                              "Nice=-5"}) == 0);
  const auto& u = r.ctld.UpdateJob_calls.at(0);
  CHECK(u.job_id() == 9);
  CHECK(u.action() == pb::UpdateJobRequest::SET);
  CHECK(u.time_limit_s() == 7200);
  CHECK(u.comment() == "hi");
  CHECK(u.nice() == -5);
  CHECK(u.priority() == -1);
  REQUIRE(r.Run(RunTcontrol, {"update", "JobId=9", "Priority=10"}) == 0);
  CHECK(r.ctld.UpdateJob_calls.at(1).priority() == 10);

  REQUIRE(r.Run(RunTcontrol, {"update", "NodeName=n[1-2]", "State=DRAIN", "Reason=bad disk"}) == 0);
  const auto& n = r.ctld.UpdateNode_calls.at(0);
  CHECK(n.name() == "n[1-2]");
  CHECK(n.action() == pb::UpdateNodeRequest::DRAIN);
  CHECK(n.reason() == "bad disk");
  REQUIRE(r.Run(RunTcontrol, {"update", "node", "n3", "state=resume"}) == 0);
  CHECK(r.ctld.UpdateNode_calls.at(1).action() == pb::UpdateNodeRequest::RESUME);
  REQUIRE(r.Run(RunTcontrol, {"drain", "n4", "reason=maintenance"}) == 0);
  CHECK(r.ctld.UpdateNode_calls.at(2).action() == pb::UpdateNodeRequest::DRAIN);

  CHECK(r.Run(RunTcontrol, {"update", "node", "n3", "State=DRAIN"}) == 1);
  CHECK(r.err.find("reason") != std::string::npos);
  CHECK(r.Run(RunTcontrol, {"update", "job", "9", "Features=x"}) == 1);
  CHECK(r.err.find("not supported: features=x") != std::string::npos);
  CHECK(r.Run(RunTcontrol, {"update", "job", "9", "TimeLimit=60:"}) == 1);
  CHECK(r.ctld.UpdateNode_calls.size() == 3);
  CHECK(r.ctld.UpdateJob_calls.size() == 2);
}

TEST_CASE("tcontrol show, events, ping and unknown commands") {
  testing::UseUtc();
  CommandRun r;
  *r.ctld.GetJob_result = Job(5, 1001, pb::PENDING, "debug");
  REQUIRE(r.Run(RunTcontrol, {"show", "job", "5"}) == 0);
  CHECK(r.out.rfind("JobId=5 JobName=j5\n   UserId=alice(1001)", 0) == 0);
  CHECK(r.ctld.GetJob_calls.at(0).job_id() == 5);
  REQUIRE(r.Run(RunTcontrol, {"-o", "show", "job", "5"}) == 0);
  CHECK(r.out.find('\n') == r.out.size() - 2);  // one line plus the blank separator

  auto* e = r.ctld.GetJobEvents_result->add_events();
  e->set_seq(3);
  e->set_job_id(5);
  e->set_time(kNow);
  e->set_type("submitted");
  e->set_detail("{\"partition\":\"debug\"}");
  REQUIRE(r.Run(RunTcontrol, {"show", "job", "5", "--events"}) == 0);
  CHECK(r.out ==
        "JobId=5 Events=1\n"
        "   Seq=3 Time=2023-11-14T22:13:20 Type=submitted Detail={\"partition\":\"debug\"}\n\n");

  r.ctld.Ping_result->set_version("0.1.0");
  r.ctld.Ping_result->set_caller_uid(1001);
  REQUIRE(r.Run(RunTcontrol, {"ping"}) == 0);
  CHECK(r.out == "tessera-ctld at ctld.test:6817 is UP (version 0.1.0; you are uid 1001)\n");

  CHECK(r.Run(RunTcontrol, {"frobnicate"}) == 1);
  CHECK(r.err == "tcmd: error: invalid command \"frobnicate\" (see tcontrol --help)\n");
  CHECK(r.Run(RunTcontrol, {"show", "widget"}) == 1);
  CHECK(r.err.find("invalid entity \"widget\"") != std::string::npos);
  r.ctld.GetJob_result = NotFound("job 77 not found");
  CHECK(r.Run(RunTcontrol, {"show", "job", "77"}) == 1);
  CHECK(r.err == "tcmd: error: job 77: job 77 not found\n");
}

TEST_CASE("tacct defaults: since midnight, own jobs, and -j lifts both") {
  testing::UseUtc();
  CommandRun r;
  REQUIRE(r.Run(RunTacct, {}) == 0);
  const auto& q = r.ctld.QueryAccounting_calls.at(0);
  CHECK(q.start_after() == 1699920000);
  CHECK(std::vector<uint32_t>(q.uids().begin(), q.uids().end()) == std::vector<uint32_t>{1001});
  CHECK(r.out ==
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
        "------------ ---------- ---------- ---------- ---------- ---------- -------- \n");
  REQUIRE(r.Run(RunTacct, {"-j", "4,5", "-s", "CD,F", "-n", "-P"}) == 0);
  const auto& j = r.ctld.QueryAccounting_calls.at(1);
  CHECK(j.start_after() == 0);
  CHECK(j.uids_size() == 0);
  CHECK(j.job_ids_size() == 2);
  CHECK(j.states_size() == 2);
  REQUIRE(r.Run(RunTacct, {"-S", "2023-11-01", "-E", "now", "-u", "bob"}) == 0);
  const auto& s = r.ctld.QueryAccounting_calls.at(2);
  CHECK(s.start_after() == 1698796800);
  CHECK(s.end_before() == kNow);
  CHECK(std::vector<uint32_t>(s.uids().begin(), s.uids().end()) == std::vector<uint32_t>{1002});
  CHECK(r.Run(RunTacct, {"-o", "JobID,Nope"}) == 1);
  CHECK(r.Run(RunTacct, {"-S", "whenever"}) == 1);
  CHECK(r.err == "tcmd: error: --starttime: invalid time specification \"whenever\"\n");
}

TEST_CASE("every command has --help and --version without a controller") {
  for (auto run : {RunTbatch, RunTqueue, RunTcancel, RunTinfo, RunTcontrol, RunTacct}) {
    CommandRun r;
    CHECK(r.Run(run, {"--help"}) == 0);
    CHECK(r.out.rfind("Usage: ", 0) == 0);
    CHECK(r.Run(run, {"--version"}) == 0);
    CHECK(r.out.rfind("tessera ", 0) == 0);
    CHECK(r.connects == 0);
  }
}

}  // namespace
}  // namespace tessera::cli
