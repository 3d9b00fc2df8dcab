// ListJobs' selection and its two answer shapes (ctld/rpc/job_listing.h).
#include <catch2/catch.hpp>

#include "common/clock.h"
#include "ctld/jobs/job_codec.h"
#include "ctld/jobs/job_manager.h"
#include "ctld/rpc/job_listing.h"
#include "test_util.h"

#include <future>

using namespace tessera;
using namespace tessera::ctld;

namespace {

JobRecord Rec(uint64_t id, JobState st) {
  JobRecord r;
  r.job_id = id;
  r.uid = 1000 + static_cast<uint32_t>(id % 2);
  r.user = id % 2 ? "bob" : "alice";
  r.state = static_cast<int>(st);
  r.reason = st == JobState::kPending ? "Priority" : "";
  r.partition = id % 3 ? "cpu" : "";
  r.spec.partition = "gpu";
  r.spec.name = "job" + std::to_string(id);
  r.spec.account = id % 4 ? "" : "physics";
  r.spec.task_groups.push_back({"main", 2, {3, 0, 0, ""}, 0, {}});
  r.spec.time_limit_s = 600;
  r.time_limit_s = id % 5 ? 0 : -1;
  r.priority = static_cast<int64_t>(id * 10);
  r.submit_time = 1000 + static_cast<int64_t>(id);
  r.expected_start = st == JobState::kPending ? 5000 : 0;
  if (st == JobState::kRunning || st == JobState::kCompleted) {
    r.start_time = 2000;
    r.alloc = {{"n1", 4, 0, {}, 1}, {"n2", 4, 0, {}, 1}};
  }
  if (st == JobState::kCompleted) r.end_time = 2500;
  return r;
}

// 1 pending, 2 running, 3 completed, 10..14 a pending array (10 its id, 11 running), 20 held.
Recovered Sample() {
  Recovered rec;
  rec.active_jobs = {Rec(1, JobState::kPending), Rec(2, JobState::kRunning),
                     Rec(3, JobState::kCompleted)};
  for (uint64_t id = 10; id <= 14; ++id) {
    JobRecord e = Rec(id, id == 11 ? JobState::kRunning : JobState::kPending);
    e.array_job_id = 10;
    e.array_task_id = static_cast<uint32_t>(id - 10);
    e.array_max_running = 2;
    rec.active_jobs.push_back(e);
  }
  JobRecord held = Rec(20, JobState::kPending);
  held.held = true;
  held.reason = "JobHeldUser";
  rec.active_jobs.push_back(held);
  rec.max_job_id = 20;
  return rec;
}

std::vector<uint64_t> Ids(const v1::ListJobsResponse& r) {
  std::vector<uint64_t> out;
  if (r.jobs_size())
    for (const auto& j : r.jobs()) out.push_back(j.job_id());
  else
    out.assign(r.summary().job_id().begin(), r.summary().job_id().end());
  return out;
}

v1::ListJobsResponse List(const JobManager& m, v1::ListJobsRequest req, bool summary) {
  req.set_summary(summary);
  v1::ListJobsResponse resp;
  rpc::FillListJobs(m, req, &resp);
  return resp;
}

}  // namespace

TEST_CASE("ListJobs summary columns agree with the JobInfo answer") {
  FakeClock clock;
  JobManager m(nullptr, &clock);
  m.Recover(Sample());
  REQUIRE(m.ordered().size() == 9);
  for (bool finished : {false, true}) {
    v1::ListJobsRequest req;
    req.set_include_finished(finished);
    auto full = List(m, req, false);
    auto sum = List(m, req, true);
    REQUIRE(full.jobs_size() > 0);
    REQUIRE(sum.jobs_size() == 0);
    const auto& s = sum.summary();
    REQUIRE(s.job_id_size() == full.jobs_size());
    auto str = [&](uint32_t i) { return s.strings(static_cast<int>(i)); };
    for (int i = 0; i < full.jobs_size(); ++i) {
      const v1::JobInfo& j = full.jobs(i);
      INFO("job " << j.job_id());
      CHECK(s.job_id(i) == j.job_id());
      CHECK(s.array_job_id(i) == j.array_job_id());
      CHECK(s.array_task_id(i) == j.array_task_id());
      CHECK(str(s.array_task_str(i)) == j.array_task_str());
      CHECK(s.state(i) == static_cast<uint32_t>(j.state()));
      CHECK(str(s.name(i)) == j.spec().name());
      CHECK(s.uid(i) == j.uid());
      CHECK(str(s.user(i)) == j.user());
      CHECK(str(s.partition(i)) == (j.partition().empty() ? j.spec().partition() : j.partition()));
      CHECK(str(s.reason(i)) == j.reason());
      CHECK(str(s.nodelist(i)) == j.nodelist());
      CHECK(str(s.account(i)) == j.account());
      CHECK(s.priority(i) == j.priority());
      CHECK(s.submit_time(i) == j.submit_time());
      CHECK(s.start_time(i) == j.start_time());
      CHECK(s.end_time(i) == j.end_time());
      CHECK(s.time_limit_s(i) ==
            (j.time_limit_s() != 0 ? j.time_limit_s() : j.spec().time_limit_s()));
      CHECK(s.expected_start_time(i) == j.expected_start_time());
      CHECK(s.num_nodes(i) == (j.alloc_size() ? j.alloc_size() : 1u));
      CHECK(s.num_cpus(i) == j.num_cpus());
    }
  }
}

TEST_CASE("ListJobs collapses a pending array and filters like before") {
  FakeClock clock;
  JobManager m(nullptr, &clock);
  m.Recover(Sample());
  for (bool summary : {false, true}) {
    v1::ListJobsRequest req;
    CHECK(Ids(List(m, req, summary)) == std::vector<uint64_t>{1, 2, 10, 11, 20});
    auto r = List(m, req, summary);
    std::string rest = summary ? r.summary().strings(static_cast<int>(r.summary().array_task_str(2)))
                               : r.jobs(2).array_task_str();
    CHECK(rest == "0,2-4%2");
    req.set_expand_arrays(true);
    CHECK(Ids(List(m, req, summary)) == std::vector<uint64_t>{1, 2, 10, 11, 12, 13, 14, 20});
    req = {};
    req.add_uids(1001);
    CHECK(Ids(List(m, req, summary)) == std::vector<uint64_t>{1, 11, 13});
    req = {};
    req.add_states(v1::COMPLETED);
    CHECK(Ids(List(m, req, summary)) == std::vector<uint64_t>{3});
  }
}

TEST_CASE("ListJobs: a held array element leaves the pending remainder (issue 19, h19)") {
  FakeClock clock;
  JobManager m(nullptr, &clock);
  Recovered rec = Sample();
  for (auto& j : rec.active_jobs)
    if (j.job_id == 13) j.held = true, j.reason = "JobHeldUser";
  m.Recover(rec);
  for (bool summary : {false, true}) {
    auto r = List(m, v1::ListJobsRequest(), summary);
    CHECK(Ids(r) == std::vector<uint64_t>{1, 2, 10, 11, 13, 20});
    std::string rest = summary ? r.summary().strings(static_cast<int>(r.summary().array_task_str(2)))
                               : r.jobs(2).array_task_str();
    CHECK(rest == "0,2,4%2");
  }
}

TEST_CASE("ListJobs by id looks the jobs up: one job, an array by its id, an element") {
  FakeClock clock;
  JobManager m(nullptr, &clock);
  m.Recover(Sample());
  for (bool summary : {false, true}) {
    v1::ListJobsRequest req;
    req.set_include_finished(true);
    req.add_job_ids(3);
    CHECK(Ids(List(m, req, summary)) == std::vector<uint64_t>{3});
    req.clear_job_ids();
    req.add_job_ids(10);  // the array: its pending rest collapsed, and the running element
    CHECK(Ids(List(m, req, summary)) == std::vector<uint64_t>{10, 11});
    req.clear_job_ids();
    req.add_job_ids(13);
    req.add_job_ids(99);
    req.add_job_ids(13);
    CHECK(Ids(List(m, req, summary)) == std::vector<uint64_t>{13});
    req.clear_job_ids();
    req.add_job_ids(20);
    req.add_job_ids(1);
    CHECK(Ids(List(m, req, summary)) == std::vector<uint64_t>{1, 20});
  }
}

TEST_CASE("SparseString fields persist exactly like strings") {
  JobRecord r = Rec(7, JobState::kPending);
  r.spec.comment = "hello";
  r.spec.dependency = "afterok:3";
  r.spec.task_groups[0].per_node.gpu_model = "a100";
  r.message = "";
  std::string json = EncodeRecord(r);
  CHECK(json.find("\"comment\":\"hello\"") != std::string::npos);
  CHECK(json.find("\"constraint\":\"\"") != std::string::npos);  // empty still written
  auto back = DecodeRecord(json);
  REQUIRE(back.ok());
  CHECK(back->spec.comment == "hello");
  CHECK(back->spec.dependency == std::string("afterok:3"));
  CHECK(back->spec.task_groups[0].per_node.gpu_model == "a100");
  CHECK(back->spec.constraint.empty());
  CHECK(EncodeRecord(*back) == json);
  SparseString s;
  CHECK(s.empty());
  CHECK(s.str().empty());
  s = std::string("x");
  SparseString copy = s;
  s = "";
  CHECK(s.empty());
  CHECK(copy == "x");
  CHECK(copy + "y" == "xy");
}

TEST_CASE("JobManager::ordered follows submissions and purges") {
  TempDir d;
  FakeClock clock;
  auto store = Store::Open(d.path + "/t.db");
  REQUIRE(store.ok());
  JobManager m(store->get(), &clock);
  m.Recover(*(*store)->Load());
  auto submit = [&](const std::string& array) {
    JobRecord draft = Rec(0, JobState::kPending);
    draft.spec.array = array;
    std::promise<Result<uint64_t>> p;
    m.Submit(std::move(draft), [&](Result<uint64_t> r) { p.set_value(r); },
             [](std::function<void()> f) { f(); });
    auto r = p.get_future().get();
    REQUIRE(r.ok());
    return *r;
  };
  auto ids = [&] {
    std::vector<uint64_t> out;
    for (const JobRecord* r : m.ordered()) out.push_back(r->job_id);
    return out;
  };
  submit("");
  submit("0-2");
  submit("");
  CHECK(ids() == std::vector<uint64_t>{1, 2, 3, 4, 5});
  bool signal = false;
  REQUIRE(m.Cancel(3, Caller{0, 0, true}, &signal).ok());
  clock.Advance(10);
  m.PurgeFinished(0);
  CHECK(ids() == std::vector<uint64_t>{1, 2, 4, 5});
  v1::ListJobsRequest req;
  req.add_job_ids(2);
  CHECK(Ids(List(m, req, true)) == std::vector<uint64_t>{2});  // 2 and 4 left: "2_[0,2]"
}
