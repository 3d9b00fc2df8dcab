#include <catch2/catch.hpp>

#include "ctld/jobs/job_codec.h"

using namespace tessera;
using namespace tessera::ctld;

TEST_CASE("record JSON round trip keeps every field") {
  JobRecord r;
  r.job_id = 42;
  r.spec.name = "train";
  r.spec.env_block = std::string("A=1\0", 4);  // not part of the record: moved to the payload
  r.spec.task_groups = {{"launcher", 1, {4, 0, 0, ""}, 0, {}}, {"worker", 16, {8, 1024, 8, "h100"}, 1, {}}};
  r.alloc = {{"n1", 4, 100, {0, 1}, 2}};
  r.state = static_cast<int>(JobState::kRunning);
  r.time_limit_s = -1;
  auto back = DecodeRecord(EncodeRecord(r));
  REQUIRE(back.ok());
  CHECK(EncodeRecord(*back) == EncodeRecord(r));
  CHECK(back->spec.task_groups[1].per_task.gpu_model == "h100");
  CHECK(back->alloc[0].gpu_indices == std::vector<uint32_t>{0, 1});
  CHECK(back->spec.env_block.empty());
}

TEST_CASE("records from an older schema (missing keys) still decode") {
  auto r = DecodeRecord(R"({"job_id": 5, "spec": {"name": "old"}, "future_field": 1})");
  REQUIRE(r.ok());
  CHECK(r->job_id == 5);
  CHECK(r->spec.name == "old");
  CHECK(r->time_limit_s == -1);
}

TEST_CASE("garbage is a clear error") {
  auto r = DecodeRecord("{not json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kDataLoss);
}

TEST_CASE("replaying events rebuilds the same record") {
  JobRecord initial;
  initial.job_id = 9;
  initial.spec.name = "x";
  initial.spec.requeue = true;
  initial.state = static_cast<int>(JobState::kPending);
  std::vector<JobEvent> events = {
      {1, 9, 100, event::kSubmitted, EncodeRecord(initial)},
      {2, 9, 101, event::kHeld, "{}"},
      {3, 9, 102, event::kReleased, "{}"},
      {4, 9, 103, event::kStarted, StartedDetail({{"n1", 2, 10, {}, 1}}, 103)},
      {5, 9, 104, event::kRequeued, RequeuedDetail("NodeFail")},
      {6, 9, 105, event::kStarted, StartedDetail({{"n2", 2, 10, {}, 1}}, 105)},
      {7, 9, 110, event::kFinished, FinishedDetail(JobState::kCompleted, 0, 0, 110, "")},
  };
  JobRecord r;
  for (const auto& e : events) {
    auto next = Apply(r, e);
    REQUIRE(next.ok());
    r = *next;
  }
  CHECK(r.State() == JobState::kCompleted);
  CHECK(r.requeue_count == 1);
  CHECK(r.alloc.size() == 1);
  CHECK(r.alloc[0].node == "n2");
  CHECK(r.start_time == 105);
  CHECK(r.end_time == 110);
  // Replaying twice gives byte-identical records: Apply is pure.
  JobRecord again;
  for (const auto& e : events) again = *Apply(again, e);
  CHECK(EncodeRecord(again) == EncodeRecord(r));
}

TEST_CASE("unknown or malformed events are rejected") {
  JobRecord r;
  CHECK_FALSE(Apply(r, {1, 1, 1, "teleported", "{}"}).ok());
  CHECK_FALSE(Apply(r, {1, 1, 1, event::kStarted, "{}"}).ok());
}
