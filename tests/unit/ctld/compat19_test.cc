// Issue 19 (h19b), the controller's side: EnforcePartLimits, sacct -j ARRAY_ID in the
// accounting store, who cancelled a job, Slurm's reasons of ended jobs.
#include <catch2/catch.hpp>

#include <map>

#include "common/cluster_config.h"
#include "common/config_file.h"
#include "ctld/config_dump.h"
#include "ctld/jobs/job_codec.h"
#include "ctld/part_limits.h"
#include "ctld/state/store.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::ctld;

namespace {

Result<ClusterConfig> Config(const std::string& extra) {
  auto lines = ParseConfigText("NodeName=n1 CPUs=2 RealMemory=1000\n" + extra +
                                   "PartitionName=debug Nodes=n1 Default=YES MaxTime=1:00:00\n",
                               "t.conf");
  if (!lines.ok()) return lines.status();
  return BuildClusterConfig(*lines, {});
}

JobRecord Rec(uint64_t id, uint64_t array_id, uint32_t task) {
  JobRecord r;
  r.job_id = id;
  r.spec.name = "job" + std::to_string(id);
  r.spec.task_groups.push_back({"main", 1, {1, 100, 0, ""}, 0, {}});
  r.state = static_cast<int>(JobState::kCompleted);
  r.uid = 1000;
  r.partition = "debug";
  r.array_job_id = array_id;
  r.array_task_id = task;
  r.end_time = 500;
  return r;
}

}  // namespace

TEST_CASE("EnforcePartLimits: NO by default, ANY/ALL/YES, bad values refused") {
  auto def = Config("");
  REQUIRE(def.ok());
  CHECK(def->enforce_part_limits == "NO");
  auto yes = Config("EnforcePartLimits=yes\n");
  REQUIRE(yes.ok());
  CHECK(yes->enforce_part_limits == "ANY");
  auto all = Config("EnforcePartLimits=ALL\n");
  REQUIRE(all.ok());
  CHECK(all->enforce_part_limits == "ALL");
  auto bad = Config("EnforcePartLimits=sometimes\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("expected NO, ANY, ALL or YES") != std::string::npos);
}

TEST_CASE("a pending job over its partition's MaxTime is held out of the cycle") {
  auto cfg = Config("");
  REQUIRE(cfg.ok());
  const PartitionConfig* p = cfg->FindPartition("debug");
  REQUIRE(p);
  CHECK_FALSE(OverPartitionTime(*p, 3600));
  CHECK(OverPartitionTime(*p, 3601));
  CHECK(OverPartitionTime(*p, -1));  // unlimited asks more than MaxTime
  sched::ClusterSnapshot snap;
  sched::JobSnap ok, over;
  ok.id = 1;
  ok.partition = "debug";
  ok.time_limit = 600;
  over.id = 2;
  over.partition = "debug";
  over.time_limit = 7200;
  snap.pending = {ok, over};
  auto held = HoldOverPartitionTime(*cfg, snap);
  CHECK(held == std::vector<uint64_t>{2});
  REQUIRE(snap.pending.size() == 1);
  CHECK(snap.pending[0].id == 1);
}

TEST_CASE("accounting: an array's id also names its elements") {
  TempDir d;
  auto s = Store::Open(d.path + "/t.db");
  REQUIRE(s.ok());
  Batch b;
  b.ArchiveJob(Rec(10, 10, 0));
  b.ArchiveJob(Rec(11, 10, 1));
  b.ArchiveJob(Rec(12, 10, 2));
  b.ArchiveJob(Rec(13, 0, 0));  // a plain job right after the array
  REQUIRE((*s)->CommitSync(std::move(b)).ok());
  AccountingFilter f;
  f.job_ids = {10};
  auto only = (*s)->QueryAccounting(f);
  REQUIRE(only.ok());
  CHECK(only->size() == 1);  // without array_span: the id alone, as before
  f.array_span = 1001;
  auto all = (*s)->QueryAccounting(f);
  REQUIRE(all.ok());
  std::vector<uint64_t> ids;
  for (const auto& r : *all) ids.push_back(r.job_id);
  CHECK(ids == std::vector<uint64_t>{10, 11, 12});
  f.job_ids = {13};
  CHECK((*s)->QueryAccounting(f)->size() == 1);
}

TEST_CASE("who cancelled a running job is kept to its end") {
  JobRecord r = Rec(5, 0, 0);
  r.state = static_cast<int>(JobState::kRunning);
  JobEvent cancel{1, 5, 100, event::kCancelRequested, "{\"uid\":1001}"};
  auto c = Apply(r, cancel);
  REQUIRE(c.ok());
  JobEvent end{2, 5, 101, event::kFinished,
               FinishedDetail(JobState::kCancelled, 0, 15, 101, "")};
  auto done = Apply(*c, end);
  REQUIRE(done.ok());
  CHECK(done->message.str() == "cancelled by uid 1001");
  CHECK(done->reason == "None");
  JobEvent old{1, 5, 100, event::kCancelRequested, "{}"};  // a record from before issue 19
  CHECK(Apply(r, old).ok());
}

TEST_CASE("ended jobs get slurmctld's reasons") {
  JobRecord r = Rec(6, 0, 0);
  r.state = static_cast<int>(JobState::kRunning);
  auto end = [&](JobState st, int code, int sig) {
    JobEvent e{1, 6, 100, event::kFinished, FinishedDetail(st, code, sig, 100, "")};
    return Apply(r, e)->reason;
  };
  CHECK(end(JobState::kFailed, 2, 0) == "NonZeroExitCode");
  CHECK(end(JobState::kFailed, 0, 9) == "JobLaunchFailure");
  CHECK(end(JobState::kTimeout, 0, 15) == "TimeLimit");
  CHECK(end(JobState::kOutOfMemory, 0, 9) == "OutOfMemory");
  CHECK(end(JobState::kNodeFail, 0, 0) == "NodeDown");
  CHECK(end(JobState::kCompleted, 0, 0) == "None");
}

TEST_CASE("show config: the running configuration under Slurm's keys (issue 19, h19)") {
  auto c = Config("KillWait=45\nMinJobAge=600\nEnforcePartLimits=ALL\n");
  REQUIRE(c.ok());
  auto lines = ParseConfigText("PriorityWeightFairShare=500\nPriorityDecayHalfLife=2-0\n", "t.conf");
  REQUIRE(lines.ok());
  auto s = sched::BuildSchedConfig(*lines);
  REQUIRE(s.ok());
  auto e = DumpConfig(*c, *s, 0);
  std::map<std::string, std::string> m(e.begin(), e.end());
  CHECK(m["KillWait"] == "45 sec");
  CHECK(m["MinJobAge"] == "600 sec");
  CHECK(m["EnforcePartLimits"] == "ALL");
  CHECK(m["PriorityWeightFairShare"] == "500");
  CHECK(m["PriorityDecayHalfLife"] == "2-00:00:00");
  CHECK(m["SlurmUser"] == "root(0)");
  CHECK(m["SlurmctldPort"] == "6817");
  CHECK(m["JobAcctGatherType"] == "jobacct_gather/cgroup");
  for (size_t i = 1; i < e.size(); ++i) {  // case-insensitive key order, as scontrol prints
    std::string a = e[i - 1].first, b = e[i].first;
    for (auto& ch : a) ch = static_cast<char>(std::tolower(ch));
    for (auto& ch : b) ch = static_cast<char>(std::tolower(ch));
    CHECK(a < b);
  }
}

TEST_CASE("who set a node's reason survives a restart (issue 19, h19: sinfo -R USER)") {
  TempDir d;
  auto s = Store::Open(d.path + "/t.db");
  REQUIRE(s.ok());
  Batch b;
  NodeStateRow row{"n1", true, false, "disk", 100, 1001};
  b.PutNodeState(row);
  NodeStateRow unknown{"n2", true, false, "fan", 100};
  b.PutNodeState(unknown);
  REQUIRE((*s)->CommitSync(std::move(b)).ok());
  auto rec = (*s)->Load();
  REQUIRE(rec.ok());
  REQUIRE(rec->nodes.size() == 2);
  CHECK(rec->nodes[0].reason_uid == 1001);
  CHECK(rec->nodes[1].reason_uid == -1);
}
