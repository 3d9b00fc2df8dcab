// Issue 19 (h19b): "around jobs" and "output that scripts parse" — array ids in every command,
// the formats and exit codes of squeue, scancel, scontrol, sacct, sinfo and sbatch compared
// with Slurm 22.05's (src/squeue, src/scancel, src/api/*_info.c, src/sacct, src/sinfo).
#include <catch2/catch.hpp>

#include "cli/lib/acct_format.h"
#include "cli/lib/info_custom.h"
#include "cli/lib/info_format.h"
#include "cli/lib/show_format.h"
#include "cli/lib/slurm_compat.h"
#include "cli/lib/tstat.h"
#include "rpc/step_usage.h"
#include "common/duration.h"
#include "fake_controller.h"

namespace tessera::cli {
namespace {

using testing::CommandRun;
using testing::kNow;

pb::JobInfo Job(uint64_t id, pb::JobState state) {
  pb::JobInfo j;
  j.set_job_id(id);
  j.set_uid(1001);
  j.set_user("alice");
  j.set_state(state);
  j.set_partition("debug");
  j.mutable_spec()->set_name("j" + std::to_string(id));
  return j;
}

// Array 100 = 100_0 (running, id 100), 100_1 (completed, id 101), pending rest 2-3%1.
std::vector<pb::JobInfo> Array() {
  std::vector<pb::JobInfo> v;
  pb::JobInfo e0 = Job(100, pb::RUNNING);
  e0.set_array_job_id(100);
  e0.set_array_task_id(0);
  e0.set_start_time(kNow - 60);
  pb::JobInfo e1 = Job(101, pb::COMPLETED);
  e1.set_array_job_id(100);
  e1.set_array_task_id(1);
  pb::JobInfo rest = Job(100, pb::PENDING);
  rest.set_array_job_id(100);
  rest.set_array_task_str("2-3%1");
  v = {e0, e1, rest};
  return v;
}

void SetJobs(CommandRun& r, const std::vector<pb::JobInfo>& jobs) {
  r.ctld.ListJobs_result->clear_jobs();
  for (const auto& j : jobs) *r.ctld.ListJobs_result->add_jobs() = j;
}

TEST_CASE("job references: ids, array elements, pending remainders") {
  auto refs = ParseJobRefList("100_2,7");
  REQUIRE(refs.ok());
  REQUIRE(refs->size() == 2);
  CHECK((*refs)[0].id == 100);
  CHECK(*(*refs)[0].task == 2);
  CHECK_FALSE((*refs)[1].task.has_value());
  CHECK_FALSE(ParseJobRefList("100_x").ok());
  CHECK_FALSE(ParseJobRefList("0").ok());
  auto jobs = Array();
  CHECK(JobRefMatches((*refs)[0], jobs[2]));  // 2 is in the remainder 2-3%1
  CHECK_FALSE(JobRefMatches((*refs)[0], jobs[0]));
  JobRef whole{100, std::nullopt, "100"};
  for (const auto& j : jobs) CHECK(JobRefMatches(whole, j));
  pb::JobInfo rest = jobs[2];
  NarrowRemainder(*refs, rest);
  CHECK(rest.array_task_str().empty());
  CHECK(rest.array_task_id() == 2);
}

TEST_CASE("memory as Slurm writes it (exact units)") {
  CHECK(FormatMemMiB(2000) == "2000M");
  CHECK(FormatMemMiB(8000) == "8000M");
  CHECK(FormatMemMiB(1536) == "1.50G");
  CHECK(FormatMemMiB(4096) == "4G");
  CHECK(FormatMemMiB(1536 * 1024) == "1.50T");
}

TEST_CASE("squeue -j takes array elements and narrows a pending remainder") {
  CommandRun r;
  SetJobs(r, Array());
  REQUIRE(r.Run(RunTqueue, {"-h", "-j", "100_3", "-o", "%i %t"}) == 0);
  CHECK(r.out == "100_3 PD\n");
  CHECK(r.ctld.ListJobs_calls.back().job_ids(0) == 100);
  REQUIRE(r.Run(RunTqueue, {"-h", "-j", "100_0", "-o", "%i %t"}) == 0);
  CHECK(r.out == "100_0 R\n");
  REQUIRE(r.Run(RunTqueue, {"-h", "-j", "100_2,100_3", "-o", "%i"}) == 0);
  CHECK(r.out == "100_[2-3]\n");
}

TEST_CASE("squeue -j: default states unless -t, and an unknown id is an error") {
  CommandRun r;
  r.prog = "squeue";
  SetJobs(r, {Job(5, pb::COMPLETED)});
  REQUIRE(r.Run(RunTqueue, {"-h", "-j", "5", "-o", "%i %T"}) == 0);
  CHECK(r.out.empty());  // finished: not shown unless -t asks
  REQUIRE(r.Run(RunTqueue, {"-h", "-j", "5", "-t", "CD", "-o", "%i %T"}) == 0);
  CHECK(r.out == "5 COMPLETED\n");
  SetJobs(r, {});
  CHECK(r.Run(RunTqueue, {"-h", "-j", "6"}) == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "slurm_load_jobs error: Invalid job id specified\n");
  // tqueue keeps its documented behaviour: any state for -j, nothing for an unknown id.
  CommandRun t;
  SetJobs(t, {Job(5, pb::COMPLETED)});
  REQUIRE(t.Run(RunTqueue, {"-h", "-j", "5", "-o", "%i %T"}) == 0);
  CHECK(t.out == "5 COMPLETED\n");
}

TEST_CASE("squeue -O JobID prints numbers, --start has SCHEDNODES, --json is refused") {
  CommandRun r;
  SetJobs(r, Array());
  REQUIRE(r.Run(RunTqueue, {"-h", "-t", "all", "-r", "-O", "JobID:8,JobArrayID:10"}) == 0);
  CHECK(r.out.find("100_[") == std::string::npos);
  CHECK(r.out.find("101     100_1") != std::string::npos);
  pb::JobInfo p = Job(7, pb::PENDING);
  p.set_reason("Resources");
  p.set_expected_start_time(kNow + 3600);
  p.set_sched_nodes("n[1-2]");
  SetJobs(r, {p});
  REQUIRE(r.Run(RunTqueue, {"--start"}) == 0);
  CHECK(r.out.find("START_TIME  NODES SCHEDNODES           NODELIST(REASON)\n") != std::string::npos);
  CHECK(r.out.find("n[1-2]               (Resources)") != std::string::npos);
  r.prog = "squeue";
  CHECK(r.Run(RunTqueue, {"--json"}) == 1);
  CHECK(r.err.find("--json is not supported") != std::string::npos);
}

TEST_CASE("scancel: a finished or unknown job is silent and no error (message with -v)") {
  CommandRun r;
  r.prog = "scancel";
  r.ctld.CancelJob_result->add_errors("12: Job/step already completing or completed");
  r.ctld.CancelJob_result->add_errors("13: Invalid job id specified");
  CHECK(r.Run(RunTcancel, {"12", "13"}) == 0);
  CHECK(r.err.empty());
  CHECK(r.Run(RunTcancel, {"-v", "12", "13"}) == 0);
  CHECK(r.err == "scancel: error: Kill job error on job id 12: Job/step already completing or "
                 "completed\nscancel: error: Kill job error on job id 13: Invalid job id specified\n");
  CHECK(r.Run(RunTcancel, {"-s", "USR1", "12"}) == 1);  // a signal to an ended job fails
  r.ctld.CancelJob_result->add_errors("14: Access/permission denied");
  CHECK(r.Run(RunTcancel, {"14"}) == 1);
  CHECK(r.err.find("Access/permission denied") != std::string::npos);
}

TEST_CASE("scontrol show job of an array: one record per element and remainder") {
  testing::UseUtc();
  CommandRun r;
  r.prog = "scontrol";
  *r.ctld.GetJob_result = Array()[0];
  SetJobs(r, Array());
  REQUIRE(r.Run(RunTcontrol, {"show", "job", "100"}) == 0);
  CHECK(r.out.find("JobId=100 ArrayJobId=100 ArrayTaskId=0 JobName=j100\n") != std::string::npos);
  CHECK(r.out.find("JobId=101 ArrayJobId=100 ArrayTaskId=1 JobName=j101\n") != std::string::npos);
  CHECK(r.out.find("JobId=100 ArrayJobId=100 ArrayTaskId=2-3 ArrayTaskThrottle=1 JobName=j100\n") !=
        std::string::npos);
  REQUIRE(r.Run(RunTcontrol, {"show", "job", "100_1"}) == 0);
  CHECK(r.out.rfind("JobId=101 ArrayJobId=100 ArrayTaskId=1 JobName=j101\n", 0) == 0);
  CHECK(r.out.find("\nJobId=") == std::string::npos);  // one record only
  r.ctld.GetJob_result = NotFound("job 77 not found");
  CHECK(r.Run(RunTcontrol, {"show", "job", "77"}) == 1);
  CHECK(r.err == "slurm_load_jobs error: Invalid job id specified\n");
}

TEST_CASE("scontrol hold/release/update take array elements") {
  CommandRun r;
  auto el = Array();
  pb::JobInfo e2 = Job(102, pb::PENDING), e3 = Job(103, pb::PENDING);
  e2.set_array_job_id(100);
  e2.set_array_task_id(2);
  e3.set_array_job_id(100);
  e3.set_array_task_id(3);
  SetJobs(r, {el[0], el[1], e2, e3});  // as ListJobs answers with expand_arrays
  REQUIRE(r.Run(RunTcontrol, {"hold", "100_3"}) == 0);
  CHECK(r.ctld.UpdateJob_calls.back().job_id() == 103);
  CHECK(r.ctld.ListJobs_calls.back().expand_arrays());
  REQUIRE(r.Run(RunTcontrol, {"release", "100"}) == 0);  // every element not finished
  const auto& rel = r.ctld.UpdateJob_calls.back();
  CHECK(std::vector<uint64_t>(rel.job_ids().begin(), rel.job_ids().end()) ==
        std::vector<uint64_t>{100, 102, 103});
  REQUIRE(r.Run(RunTcontrol, {"update", "JobId=100_2", "TimeLimit=10"}) == 0);
  CHECK(r.ctld.UpdateJob_calls.back().job_id() == 102);
  CHECK(r.Run(RunTcontrol, {"hold", "100_9"}) == 1);
  CHECK(r.err.find("Invalid job id specified for job 100_9") != std::string::npos);
}

TEST_CASE("scontrol show job: Slurm 22.05's keys, reasons of ended jobs, TRES") {
  testing::UseUtc();
  FakeIdNames names;
  pb::JobInfo j = Job(42, pb::FAILED);
  j.set_reason("None");
  j.set_exit_code(3);
  j.set_num_cpus(2);
  j.set_start_time(kNow - 100);
  j.set_end_time(kNow - 10);
  auto* a = j.add_alloc();
  a->set_node("n1");
  a->set_cpus(2);
  a->set_mem_mib(2000);
  j.set_nodelist("n1");
  std::string o = FormatJobDetail(j, names, kNow);
  for (const char* key :
       {" MCS_label=N/A\n", " Reboot=0 ExitCode=3:0\n", "   AccrueTime=", "   SuspendTime=None ",
        " SecsPreSuspend=0 LastSchedEval=", " Scheduler=Main\n", " AllocNode:Sid=",
        " ReqB:S:C:T=0:0:*:*\n", "   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n",
        "   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0\n", "   Features=(null) DelayBoot=00:00:00\n",
        " Contiguous=0 Licenses=(null) Network=(null)\n", "   Power=\n"})
    CHECK(o.find(key) != std::string::npos);
  CHECK(o.find("JobState=FAILED Reason=NonZeroExitCode ") != std::string::npos);
  CHECK(o.find("   TRES=cpu=2,mem=2000M,node=1,billing=2\n") != std::string::npos);
}

TEST_CASE("scontrol show node and partition: Slurm 22.05's keys") {
  testing::UseUtc();
  pb::NodeInfo n;
  n.set_name("n1");
  n.set_port(6818);
  n.set_state(pb::NODE_IDLE);
  n.set_cpus(4);
  n.set_real_memory_mib(8000);
  n.set_weight(5);
  n.set_os("Linux 6.1.0 #1 SMP");
  n.set_arch("x86_64");
  n.set_cpu_load_x100(52);
  n.set_free_mem_mib(6000);
  n.add_partitions("debug");
  std::string o = FormatNodeDetail(n);
  CHECK(o.rfind("NodeName=n1 Arch=x86_64 CoresPerSocket=1 \n"
                "   CPUAlloc=0 CPUEfctv=4 CPUTot=4 CPULoad=0.52\n", 0) == 0);
  for (const char* key : {"   OS=Linux 6.1.0 #1 SMP \n",
                          "   RealMemory=8000 AllocMem=0 FreeMem=6000 Sockets=4 Boards=1\n",
                          "   State=IDLE ThreadsPerCore=1 TmpDisk=0 Weight=5 Owner=N/A MCS_label=N/A\n",
                          "   CfgTRES=cpu=4,mem=8000M,billing=4\n", "   CapWatts=n/a\n",
                          "   CurrentWatts=n/s AveWatts=n/s\n", "   LastBusyTime="})
    CHECK(o.find(key) != std::string::npos);
  pb::PartitionInfo p;
  p.set_name("debug");
  p.set_is_default(true);
  p.set_up(true);
  p.set_max_time_s(86400);
  p.set_default_time_s(-1);
  p.set_nodes("n[1-2]");
  p.set_total_nodes(2);
  p.set_total_cpus(8);
  p.set_total_mem_mib(16000);
  p.set_priority_tier(1);
  p.set_preempt_mode("OFF");
  CHECK(FormatPartitionDetail(p) ==
        "PartitionName=debug\n"
        "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
        "   AllocNodes=ALL Default=YES QoS=N/A\n"
        "   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n"
        "   MaxNodes=UNLIMITED MaxTime=1-00:00:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n"
        "   Nodes=n[1-2]\n"
        "   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
        "   OverTimeLimit=NONE PreemptMode=OFF\n"
        "   State=UP TotalCPUs=8 TotalNodes=2 SelectTypeParameters=NONE\n"
        "   JobDefaults=(null)\n"
        "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
        "   TRES=cpu=8,mem=16000M,node=2,billing=8\n"
        "\n");
}

TEST_CASE("sacct: CANCELLED by uid with 0:0, .batch rows, -l, array ids, no look-alike JSON") {
  testing::UseUtc();
  CommandRun r;
  r.prog = "sacct";
  pb::JobInfo c = Job(9, pb::CANCELLED);
  c.set_cancelled_by_uid("1001");
  c.set_exit_signal(15);
  c.set_start_time(kNow - 50);
  c.set_end_time(kNow - 5);
  auto* a = c.add_alloc();
  a->set_node("n1");
  a->set_cpus(2);
  c.set_nodelist("n1");
  *r.ctld.QueryAccounting_result->add_jobs() = c;
  REQUIRE(r.Run(RunTacct, {"-P", "-n", "-j", "9", "-o", "JobID,JobName,Partition,State,ExitCode"}) == 0);
  CHECK(r.out == "9|j9|debug|CANCELLED by 1001|0:0\n"
                 "9.batch|batch||CANCELLED|0:15\n");
  REQUIRE(r.Run(RunTacct, {"-l", "-j", "9"}) == 0);
  CHECK(r.out.rfind("JobID        JobIDRaw        JobName  Partition  MaxVMSize  MaxVMSizeNode  "
                    "MaxVMSizeTask  AveVMSize     MaxRSS MaxRSSNode MaxRSSTask     AveRSS MaxPages ",
                    0) == 0);
  r.ctld.QueryAccounting_result->clear_jobs();
  for (const auto& j : Array()) *r.ctld.QueryAccounting_result->add_jobs() = j;
  REQUIRE(r.Run(RunTacct, {"-P", "-n", "-X", "-j", "100_1", "-o", "JobID,JobIDRaw"}) == 0);
  CHECK(r.out == "100_1|101\n");
  REQUIRE(r.Run(RunTacct, {"-P", "-n", "-X", "-j", "100", "-o", "JobID"}) == 0);
  CHECK(r.out == "100_0\n100_[2-3%1]\n100_1\n");
  CHECK(r.Run(RunTacct, {"--json"}) == 1);
  CHECK(r.err.find("--json is not supported") != std::string::npos);
}

pb::NodeInfo Node(const std::string& name, pb::NodeState st, std::vector<std::string> parts) {
  pb::NodeInfo n;
  n.set_name(name);
  n.set_state(st);
  n.set_cpus(4);
  n.set_real_memory_mib(8000);
  for (const auto& p : parts) n.add_partitions(p);
  return n;
}

TEST_CASE("sinfo -o %n %T %C %e %m: valid host lists, no double counting, drained") {
  pb::PartitionInfo a, b;
  a.set_name("a");
  a.set_nodes("n[1-3]");
  b.set_name("b");
  b.set_nodes("n[2-3]");
  std::vector<pb::NodeInfo> nodes = {Node("n1", pb::NODE_IDLE, {"a"}),
                                     Node("n2", pb::NODE_IDLE, {"a", "b"}),
                                     Node("n3", pb::NODE_DRAINED, {"a", "b"})};
  auto fmt = ParseInfoFormat("%n %T %C %e %m");
  REQUIRE(fmt.ok());
  CHECK(FormatInfoCustom({a, b}, nodes, *fmt, false, false) ==
        "n1 idle 0/4/0/4 N/A 8000\n"
        "n2 idle 0/4/0/4 N/A 8000\n"
        "n3 drained 0/0/4/4 N/A 8000\n");
  auto cnt = ParseInfoFormat("%D %C");
  REQUIRE(cnt.ok());
  CHECK(FormatInfoCustom({a, b}, {nodes[0], nodes[1]}, *cnt, false, false) == "2 0/8/0/8\n");
}

TEST_CASE("sinfo -s and -R's TIMESTAMP") {
  testing::UseUtc();
  CommandRun r;
  auto* p = r.ctld.ListPartitions_result->add_partitions();
  p->set_name("debug");
  p->set_is_default(true);
  p->set_up(true);
  p->set_max_time_s(-1);
  p->set_nodes("n[1-3]");
  *r.ctld.ListNodes_result->add_nodes() = Node("n1", pb::NODE_ALLOCATED, {"debug"});
  *r.ctld.ListNodes_result->add_nodes() = Node("n2", pb::NODE_IDLE, {"debug"});
  pb::NodeInfo n3 = Node("n3", pb::NODE_DRAINED, {"debug"});
  n3.set_reason("disk");
  n3.set_reason_time(kNow);
  *r.ctld.ListNodes_result->add_nodes() = n3;
  REQUIRE(r.Run(RunTinfo, {"-s"}) == 0);
  CHECK(r.out ==
        "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T)  NODELIST\n"
        "debug*       up   infinite          1/1/1/3  n[1-3]\n");
  REQUIRE(r.Run(RunTinfo, {"-R"}) == 0);
  CHECK(r.out == "REASON               USER      TIMESTAMP           NODELIST\n"
                 "disk                 Unknown   2023-11-14T22:13:20 n3\n");
  // Issue 19 (h19): USER is who set the reason, by name (the uid where it has none).
  r.ctld.ListNodes_result->mutable_nodes(2)->set_reason_uid(0);
  REQUIRE(r.Run(RunTinfo, {"-R"}) == 0);
  CHECK(r.out.find("disk                 root      2023-11-14T22:13:20 n3\n") != std::string::npos);
  r.ctld.ListNodes_result->mutable_nodes(2)->set_reason_uid(4242);
  REQUIRE(r.Run(RunTinfo, {"-R"}) == 0);
  CHECK(r.out.find("disk                 4242      2023-11-14T22:13:20 n3\n") != std::string::npos);
}

TEST_CASE("sbatch: option errors exit 255 with Slurm's words; --test-only names the id") {
  CommandRun r;
  r.prog = "sbatch";
  CHECK(r.Run(RunTbatch, {"--bogus", "--wrap", "true"}) == 255);
  CHECK(r.err == "sbatch: unrecognized option '--bogus'\n"
                 "Try \"sbatch --help\" for more information\n");
  CHECK(r.Run(RunTbatch, {"--time=60:", "--wrap", "true"}) == 255);
  CHECK(r.err.rfind("sbatch: error: invalid --time value", 0) == 0);
  r.ctld.SubmitJob_result->set_job_id(57);
  REQUIRE(r.Run(RunTbatch, {"--test-only", "--wrap", "true"}) == 0);
  CHECK(r.err.rfind("sbatch: Job 57 to start at", 0) == 0);
  CommandRun t;  // tbatch keeps its own message and exit status
  CHECK(t.Run(RunTbatch, {"--bogus", "--wrap", "true"}) == 1);
}

TEST_CASE("scontrol show config: the running controller's parameters (issue 19, h19)") {
  testing::UseUtc();
  CommandRun r;
  auto* e = r.ctld.ShowConfig_result->add_entries();
  e->set_key("KillWait");
  e->set_value("30 sec");
  e = r.ctld.ShowConfig_result->add_entries();
  e->set_key("SlurmctldHost[0]");
  e->set_value("head(10.0.0.1)");
  REQUIRE(r.Run(RunTcontrol, {"show", "config"}) == 0);
  CHECK(r.ctld.ShowConfig_calls.size() == 1);
  CHECK(r.out == "Configuration data as of 2023-11-14T22:13:20\n"
                 "KillWait                = 30 sec\n"
                 "SlurmctldHost[0]        = head(10.0.0.1)\n"
                 "\n"
                 "Slurmctld(primary) at head is UP\n");
  r.ctld.ShowConfig_result = Status(Code::kPermissionDenied, "denied");
  CHECK(r.Run(RunTcontrol, {"show", "config"}) == 1);
  // The controller cannot be reached: the local file, saying so.
  r.ctld.ShowConfig_result = Status(Code::kUnavailable, "down");
  r.env["TESSERA_CONF"] = "/etc/t.conf";
  r.files["/etc/t.conf"] = "ClusterName=a\n";
  REQUIRE(r.Run(RunTcontrol, {"show", "config"}) == 0);
  CHECK(r.out == "Configuration data from /etc/t.conf (read locally: the controller cannot be "
                 "reached: down)\nClusterName             = a\n");
}

// A StepAgent that answers GetStepUsage with a fixed part (sstat).
class UsageNode final : public StepAgentApi {
 public:
  explicit UsageNode(pb::StepUsage u) : u_(std::move(u)) {}
  std::string Target() const override { return "node"; }
  Status RunTasks(const pb::RunTasksRequest&, const OnOutput&) override { return Status::Ok(); }
  void Cancel() override {}
  Status SignalTasks(const pb::SignalTasksRequest&) override { return Status::Ok(); }
  Result<pb::StepUsage> GetStepUsage(uint64_t, uint32_t) override { return u_; }
  Status AttachTasks(uint64_t, uint32_t, const OnOutput& on) override {
    for (uint32_t stream : {1u, 2u}) {
      pb::TaskOutput m;
      m.mutable_data()->set_rank(u_.max_rss_task());
      m.mutable_data()->set_stream(stream);
      m.mutable_data()->set_data(stream == 1 ? "out\npart" : "err\n");
      on(m);
    }
    return Status::Ok();
  }

 private:
  pb::StepUsage u_;
};

pb::StepUsage Part(const std::string& node, uint32_t rank, uint64_t rss, uint64_t cpu_ms) {
  pb::StepUsage u;
  u.set_ntasks(1);
  u.set_max_rss_kib(rss);
  u.set_max_rss_node(node);
  u.set_max_rss_task(rank);
  u.set_sum_rss_kib(rss);
  u.set_max_vmsize_kib(rss * 2);
  u.set_max_vmsize_node(node);
  u.set_max_vmsize_task(rank);
  u.set_sum_vmsize_kib(rss * 2);
  u.set_min_cpu_ms(cpu_ms);
  u.set_min_cpu_node(node);
  u.set_min_cpu_task(rank);
  u.set_user_cpu_ms(cpu_ms);
  return u;
}

TEST_CASE("sacct: usage per step and .batch, CPU totals on the job row (issue 19, h19)") {
  CommandRun r;
  pb::JobInfo j;
  j.set_job_id(7);
  j.set_state(pb::COMPLETED);
  j.set_start_time(kNow - 100);
  j.set_end_time(kNow - 10);
  j.set_nodelist("n[1-2]");
  j.add_alloc()->set_node("n1");
  *r.ctld.QueryAccounting_result->add_jobs() = j;
  auto* s = r.ctld.QueryAccounting_result->add_steps();
  s->set_job_id(7);
  s->set_step_id(0);
  s->set_name("python");
  s->set_state(pb::COMPLETED);
  s->set_nodelist("n[1-2]");
  s->set_ntasks(2);
  pb::StepUsage u = Part("n1", 0, 2048, 1500);
  rpc::AddStepUsage(Part("n2", 1, 1024 * 1024, 61000), &u);
  *s->mutable_usage() = u;
  auto* b = r.ctld.QueryAccounting_result->add_steps();
  b->set_job_id(7);
  b->set_step_id(0xfffffffb);
  b->set_name("batch");
  *b->mutable_usage() = Part("", 0, 1000, 20);
  REQUIRE(r.Run(RunTacct, {"-P", "-n", "-j", "7", "-o",
                           "JobID,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,MaxVMSize,AveCPU,MinCPU,"
                           "MinCPUNode,TotalCPU"}) == 0);
  CHECK(r.out == "7|||||||||01:02.520\n"
                 "7.batch|1000K|n1|0|1000K|2000K|00:00:00|00:00:00|n1|00:00.020\n"
                 "7.0|1G|n2|1|513M|2G|00:00:31|00:00:01|n1|01:02.500\n");
  // Without usage gathered (an older controller): empty, and CPU totals of zero.
  r.ctld.QueryAccounting_result->clear_steps();
  REQUIRE(r.Run(RunTacct, {"-P", "-n", "-X", "-j", "7", "-o", "JobID,MaxRSS,TotalCPU"}) == 0);
  CHECK(r.out == "7||00:00:00\n");
}

TEST_CASE("sstat: live usage of a running step from its nodes, added up (issue 19, h19)") {
  CommandRun r;
  r.prog = "sstat";
  auto* s = r.ctld.QueryAccounting_result->add_steps();
  s->set_job_id(8);
  s->set_step_id(0);
  s->set_state(pb::RUNNING);
  s->set_nodelist("n[1-2]");
  s->set_ntasks(2);
  auto* done = r.ctld.QueryAccounting_result->add_steps();
  *done = *s;
  done->set_step_id(1);
  done->set_state(pb::COMPLETED);
  for (const char* n : {"n1", "n2"}) {
    auto* node = r.ctld.ListNodes_result->add_nodes();
    node->set_name(n);
    node->set_port(6818);
  }
  std::vector<std::string> asked;
  NodeConnector connect = [&](const pb::StepNode& n) -> Result<std::unique_ptr<StepAgentApi>> {
    asked.push_back(n.node() + ":" + std::to_string(n.port()));
    uint32_t rank = n.node() == "n1" ? 0 : 1;
    return std::unique_ptr<StepAgentApi>(
        new UsageNode(Part(n.node(), rank, rank ? 4096 : 1024, rank ? 3000 : 1000)));
  };
  REQUIRE(r.Run([&](CommandContext& c) { return RunTstatWith(c, connect); },
                {"-j", "8", "-P", "-o", "JobID,MaxRSS,MaxRSSNode,AveRSS,AveCPU,NTasks"}) == 0);
  CHECK(asked == std::vector<std::string>{"n1:6818", "n2:6818"});
  CHECK(r.out == "JobID|MaxRSS|MaxRSSNode|AveRSS|AveCPU|NTasks\n"
                 "8.0|4M|n2|2560K|00:00:02|2\n");
  REQUIRE(r.Run([&](CommandContext& c) { return RunTstatWith(c, connect); }, {"-j", "8.0"}) == 0);
  CHECK(r.out.rfind("JobID         MaxVMSize  MaxVMSizeNode  MaxVMSizeTask  AveVMSize     MaxRSS", 0) == 0);
  CHECK(r.Run([&](CommandContext& c) { return RunTstatWith(c, connect); }, {"-j", "8.1"}) == 1);
  CHECK(r.err == "sstat: error: no steps running for job 8.1\n");
  CHECK(r.Run([&](CommandContext& c) { return RunTstatWith(c, connect); }, {"-j", "8.batch"}) == 1);
  CHECK(r.Run([&](CommandContext& c) { return RunTstatWith(c, connect); }, {}) == 1);
}

TEST_CASE("sattach: the step's output from every node, -l labels (issue 19, h19)") {
  CommandRun r;
  r.prog = "sattach";
  auto* s = r.ctld.QueryAccounting_result->add_steps();
  s->set_job_id(8);
  s->set_step_id(2);
  s->set_state(pb::RUNNING);
  s->set_nodelist("n1");
  s->set_ntasks(1);
  r.ctld.ListNodes_result->add_nodes()->set_name("n1");
  NodeConnector connect = [&](const pb::StepNode& n) -> Result<std::unique_ptr<StepAgentApi>> {
    return std::unique_ptr<StepAgentApi>(new UsageNode(Part(n.node(), 3, 1, 1)));
  };
  auto run = [&](std::vector<std::string> args) {
    return r.Run([&](CommandContext& c) { return RunTattachWith(c, connect); }, std::move(args));
  };
  REQUIRE(run({"8.2"}) == 0);
  CHECK(r.out == "out\npart");
  CHECK(r.err == "err\n");
  REQUIRE(run({"-l", "8.2"}) == 0);
  CHECK(r.out == "3: out\n3: part\n");
  CHECK(r.err == "3: err\n");
  REQUIRE(run({"--output-filter=0", "8.2"}) == 0);
  CHECK(r.out.empty());
  CHECK(run({"8.5"}) == 1);
  CHECK(r.err == "sattach: error: job step 8.5 is not running\n");
  CHECK(run({"8"}) == 1);
  CHECK(run({"--pty", "8.2"}) == 1);
}

}  // namespace
}  // namespace tessera::cli
